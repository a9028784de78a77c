import type Docker from "dockerode";
import { posix } from "node:path";
import { SUPERVISOR_PATH } from "./channel/supervisor_binary.ts";
import { WORKSPACE } from "./paths.ts";

/**
 * Where a sandbox may write, and how much. Docker's own size limit (`--storage-opt size`) needs xfs with
 * project quotas under overlay2, and the local volume driver cannot loop-mount an image, so neither
 * holds on a common overlay2-on-ext4 host. What holds everywhere: the container's root filesystem is
 * read-only (its writable layer takes no byte), and the places programs write are tmpfs mounts the
 * kernel caps — /workspace at sandbox.disk_mb, /tmp at sandbox.tmp_mb — so a write past them fails with
 * ENOSPC inside the sandbox. The cost is RAM: a tmpfs keeps its files in memory, charged to the
 * container's memory cgroup, whose limit is therefore raised by their sizes (else filling a disk would
 * be an OOM kill instead of ENOSPC). Files do not survive the container stopping.
 */
export interface DiskLimits {
  memoryMb: number;
  diskMb: number;
  tmpMb: number;
}

/** The POSIX shared-memory tmpfs, Docker's default size, counted in the memory limit like the others. */
const SHM_MB = 64;
const MiB = 1024 * 1024;
/** Where the supervisor is placed: the one volume, root-owned, so the sandbox user cannot write it. */
export const SUPERVISOR_DIR = posix.dirname(SUPERVISOR_PATH);

/** tmpfs options: size and an inode cap (one per 4 KiB, so empty files cannot take unbounded kernel memory). */
function tmpfs(mb: number, owner: string): string {
  return `size=${mb}m,nr_inodes=${Math.max(1024, mb * 256)},exec,nosuid,nodev,${owner}`;
}

/** Whose workspace a container's storage is (uid, gid), its labels, and the VOLUMEs its image declares. */
export interface ContainerStorage {
  uid: number;
  gid: number;
  labels: Record<string, string>;
  imageVolumes?: string[];
}

/**
 * The HostConfig of a sandbox's storage: read-only root, size-capped tmpfs for /workspace and /tmp,
 * memory raised by what those may hold, no container log (a process writing to PID 1's stdout would
 * otherwise grow a log file on the host without bound), and an anonymous volume for the supervisor (the
 * archive endpoint can put a file into a volume, not into a read-only root or a tmpfs). The volume
 * carries the container's labels, so a sweep finds one left behind. Each VOLUME the image declares
 * would be a writable directory on the host's disk: it gets an empty read-only tmpfs instead.
 */
export function storageHostConfig(
  l: DiskLimits,
  { uid, gid, labels, imageVolumes = [] }: ContainerStorage,
): Docker.HostConfig {
  const memory = (l.memoryMb + l.diskMb + l.tmpMb + SHM_MB) * MiB;
  const sealed = imageVolumes.filter((path) => posix.normalize(path) !== SUPERVISOR_DIR)
    .map((path) => [path, "ro,size=4k,nosuid,nodev,noexec"]);
  return {
    ReadonlyRootfs: true,
    Tmpfs: {
      ...Object.fromEntries(sealed),
      [WORKSPACE]: tmpfs(l.diskMb, `uid=${uid},gid=${gid},mode=0755`),
      "/tmp": tmpfs(l.tmpMb, "mode=1777"),
    },
    ShmSize: SHM_MB * MiB,
    Memory: memory,
    MemorySwap: memory,
    Mounts: [{
      Type: "volume",
      Source: "", // anonymous: `docker rm -v` (remove with v) removes it with the container
      Target: SUPERVISOR_DIR,
      VolumeOptions: { NoCopy: true, Labels: labels, DriverConfig: { Name: "local", Options: {} } },
    }],
    LogConfig: { Type: "none", Config: {} },
  };
}

/** Removes the volumes carrying all these labels that no container uses any more; returns their names. */
export async function removeOrphanVolumes(docker: Docker, labels: Record<string, string>): Promise<string[]> {
  const { Volumes } = await docker.listVolumes({
    filters: { label: Object.entries(labels).map(([k, v]) => `${k}=${v}`), dangling: ["true"] },
  });
  const removed = await Promise.all(
    (Volumes ?? []).map((v) => docker.getVolume(v.Name).remove().then(() => v.Name, () => undefined)),
  );
  return removed.filter((name) => name !== undefined);
}
