import { join } from "node:path";
import { stopProcessesOf } from "../../scripts/lib/processes.ts";

/** A throwaway $STATION_HOME with an env for child processes; removed, with every process of it, by cleanup(). */
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
    cleanup: async () => {
      // A station killed by SIGKILL cannot stop its managed nats-server (the next stn on the home would):
      // nothing a test started on this home may outlive it.
      await stopProcessesOf(home);
      await Deno.remove(home, { recursive: true }).catch(() => {});
    },
  };
}
