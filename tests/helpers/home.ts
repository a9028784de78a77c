import { join } from "node:path";

/** A throwaway $STATION_HOME with an env for child processes; removed by cleanup(). */
export interface TempHome {
  home: string;
  /** Environment for a child `stn`: this home, no inherited server discovery. */
  env: Record<string, string>;
  path(...parts: string[]): string;
  writeConfig(yaml: string): void;
  cleanup(): Promise<void>;
}

/** Creates an empty station home in a temp dir. */
export async function tempHome(): Promise<TempHome> {
  const home = await Deno.makeTempDir({ prefix: "stn-test-" });
  const env: Record<string, string> = { STATION_HOME: home, NO_COLOR: "1" };
  return {
    home,
    env,
    path: (...parts) => join(home, ...parts),
    writeConfig: (yaml) => Deno.writeTextFileSync(join(home, "config.yaml"), yaml),
    cleanup: () => Deno.remove(home, { recursive: true }).catch(() => {}),
  };
}
