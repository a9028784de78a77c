import { basename } from "node:path";
import { usageError } from "../errors.ts";

/** The label on every container and volume `stn up` makes: its value is the station's name. */
export const UP_LABEL = "dev.stn.up";
/** The label holding a hash of how the container was created: `up` with the same hash is a no-op. */
export const SPEC_LABEL = "dev.stn.up.spec";
/** The label on station images, naming the builder that made them. */
export const IMAGE_LABEL = "dev.stn.image";
/** Where the station keeps its data inside the container (a named volume). */
export const DATA_DIR = "/data";
/** The uid and gid of the image's non-root `station` user. */
export const STATION_UID = 1000;
/** The ports the station listens on inside the container: API, MCP, agent MCP. */
export const CONTAINER_PORTS = { api: 8585, mcp: 8586, agent: 8587 } as const;

/** The Docker objects of one `stn up` station. */
export interface StationNames {
  name: string;
  container: string;
  volume: string;
}

/** A station's name (given, or the workspace folder's), as Docker allows it in container names. */
export function stationNames(given: string | undefined, workspace: string): StationNames {
  const raw = given ?? basename(workspace);
  const name = raw.toLowerCase().replace(/[^a-z0-9_.-]+/g, "-").replace(/^[^a-z0-9]+/, "").slice(0, 60);
  if (!name || (given !== undefined && name !== given)) {
    throw usageError(
      "invalid_usage",
      `${JSON.stringify(raw)} cannot name a station`,
      "give --name with lowercase letters, digits, _ . or - (starting with a letter or digit)",
    );
  }
  return { name, container: `stn-${name}`, volume: `stn-${name}-data` };
}
