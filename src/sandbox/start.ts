import type { Database } from "../db/database.ts";
import type { FileStore } from "../files/store.ts";
import { log } from "../log.ts";
import { DockerBackend, dockerClient } from "./docker.ts";
import { stationId } from "./ledger.ts";
import { type SandboxConfig, SandboxService } from "./service.ts";

/**
 * Starts the sandbox service when enabled and the Docker Engine answers; otherwise the station runs
 * without sandboxes (their routes answer 503 saying why).
 */
export async function startSandboxService(
  config: SandboxConfig,
  db: Database,
  files: FileStore,
): Promise<SandboxService | undefined> {
  if (!config.enabled) return undefined;
  const docker = dockerClient(config.docker_host);
  try {
    await docker.ping();
  } catch (err) {
    log.warn("Docker Engine not reachable: sandboxes are unavailable", { error: (err as Error).message });
    return undefined;
  }
  const backend = new DockerBackend(docker, {
    user: config.user,
    memoryMb: config.memory_mb,
    cpus: config.cpus,
    pidsLimit: config.pids_limit,
    pullTimeoutMs: config.pull_timeout,
    callTimeoutMs: config.docker_timeout,
  });
  const service = new SandboxService(backend, db, files, config, stationId(db));
  await service.start();
  return service;
}
