import type { StationPaths } from "../config/paths.ts";
import { readServerFile } from "../config/server_file.ts";
import { lastStationFile } from "./host.ts";
import { connectEngine, inspectContainer } from "./docker.ts";
import { type StationNames, stationNames } from "./names.ts";

/**
 * The station a command without --name means: the one server.json announces, else the last one `stn up`
 * started from this home (kept after `stn down`), else the current folder's.
 */
export function targetNames(paths: StationPaths, name: string | undefined): StationNames {
  if (name) return stationNames(name, Deno.cwd());
  const announced = readServerFile(paths.serverJson)?.container ?? lastStation(paths);
  if (announced?.startsWith("stn-")) return stationNames(announced.slice(4), Deno.cwd());
  return stationNames(undefined, Deno.cwd());
}

function lastStation(paths: StationPaths): string | undefined {
  try {
    return Deno.readTextFileSync(lastStationFile(paths)).trim() || undefined;
  } catch {
    return undefined;
  }
}

/** A station container's state for `stn status`. */
export interface ContainerState {
  container: string;
  state: string;
  running: boolean;
  started_at: string;
  image: string;
  /** "127.0.0.1:8585->8585/tcp", one per published port. */
  ports: string[];
}

/** The station container's state, or null when it does not exist (docker_unreachable when Docker is down). */
export async function containerState(name: string): Promise<ContainerState | null> {
  const { docker } = await connectEngine();
  const info = await inspectContainer(docker, name);
  if (!info) return null;
  const bindings = (info.HostConfig.PortBindings ?? {}) as Record<
    string,
    { HostIp: string; HostPort: string }[]
  >;
  return {
    container: name,
    state: info.State.Status,
    running: info.State.Running,
    started_at: info.State.StartedAt,
    image: info.Config.Image,
    ports: Object.entries(bindings).flatMap(([inside, list]) =>
      list.map((b) => `${b.HostIp || "0.0.0.0"}:${b.HostPort}->${inside}`)
    ).sort(),
  };
}
