/** `stn down`: stops and removes a station's container and its sandboxes (with --purge its volume, image, token). */

import type Docker from "dockerode";
import type { StationPaths } from "../config/paths.ts";
import { removeOrphanVolumes } from "../sandbox/disk.ts";
import { MANAGED_LABEL } from "../sandbox/docker.ts";
import { connectEngine, inspectContainer, isMissing } from "./docker.ts";
import { forget, tokenFile } from "./host.ts";
import { removeStationImage } from "./image.ts";
import { type StationNames, UP_LABEL } from "./names.ts";

/** What `stn down` removed. */
export interface DownResult {
  container: string;
  /** False when there was no container to stop. */
  stopped: boolean;
  /** Sandbox containers the station had started, removed with it. */
  sandboxes: number;
  volume: string;
  volume_removed: boolean;
  image_removed: string | null;
}

/**
 * Removes the sandbox containers a station started from inside (they carry its dev.stn.up label), with
 * their volumes, and any such volume a container removed earlier left behind.
 */
async function removeSandboxes(docker: Docker, name: string): Promise<number> {
  const labels = { [MANAGED_LABEL]: "true", [UP_LABEL]: name };
  const found = await docker.listContainers({
    all: true,
    filters: { label: Object.entries(labels).map(([k, v]) => `${k}=${v}`) },
  });
  await Promise.all(
    found.map((c) => docker.getContainer(c.Id).remove({ force: true, v: true }).catch(() => {})),
  );
  await removeOrphanVolumes(docker, labels).catch(() => {});
  return found.length;
}

/** `stn down`: stops and removes the container and its sandboxes; with purge also the volume, image and token. */
export async function down(
  paths: StationPaths,
  names: StationNames,
  options: { purge: boolean },
): Promise<DownResult> {
  const { docker } = await connectEngine();
  const info = await inspectContainer(docker, names.container);
  if (info) {
    // A graceful stop first: the station closes its runs' state before it goes.
    await docker.getContainer(names.container).stop({ t: 10 }).catch(() => {});
    await docker.getContainer(names.container).remove({ force: true }).catch((err) => {
      if (!isMissing(err)) throw err;
    });
  }
  const sandboxes = await removeSandboxes(docker, names.name);
  forget(paths, names.container);
  const result: DownResult = {
    container: names.container,
    stopped: info !== null,
    sandboxes,
    volume: names.volume,
    volume_removed: false,
    image_removed: null,
  };
  if (!options.purge) return result;
  result.volume_removed = await docker.getVolume(names.volume).remove().then(() => true, (err) => {
    if (isMissing(err)) return false;
    throw err;
  });
  // Another station may still run the image: then it stays.
  if (info && await removeStationImage(docker, info.Image)) result.image_removed = info.Config.Image;
  try {
    Deno.removeSync(tokenFile(paths, names.name));
  } catch { /* never made */ }
  return result;
}
