/** Starting the sandbox service when enabled and Docker answers, else saying why there is none. */

import type { Database } from "../db/database.ts";
import type { FileStore } from "../files/store.ts";
import { log } from "../log.ts";
import type { SandboxBackend } from "./backend.ts";
import { DockerBackend, dockerClient } from "./docker.ts";
import { explainDockerError, resolveDockerHost } from "./docker_host.ts";
import { stationId } from "./ledger.ts";
import { type SandboxConfig, SandboxService } from "./service.ts";

/** Why a station has no sandboxes: what to tell a caller that needs one, and how to fix it. */
export interface SandboxUnavailable {
  message: string;
  hint: string;
}

/**
 * Starts the sandbox service when enabled and the Docker Engine answers; otherwise the station runs
 * without sandboxes, and says why (routes and runs that need one answer 503 with that reason; `quiet`
 * leaves the log warning out, for embedded commands). With `backend` (the stub of `sandbox: mock` test
 * cases), that backend instead of Docker.
 */
export async function startSandboxService(
  config: SandboxConfig,
  db: Database,
  files: FileStore,
  options: { quiet?: boolean; backend?: SandboxBackend } = {},
): Promise<{ service?: SandboxService; unavailable?: SandboxUnavailable }> {
  if (options.backend) {
    const service = new SandboxService(options.backend, {
      db,
      files,
      config: { ...config, pool: {} },
      stationId: stationId(db),
    });
    await service.start();
    return { service };
  }
  if (!config.enabled) {
    return {
      unavailable: {
        message: "sandboxes are disabled on this station (sandbox.enabled: false)",
        hint: "set sandbox.enabled: true in config.yaml (or STN_SANDBOX_ENABLED=true)",
      },
    };
  }
  const { host } = resolveDockerHost(config.docker_host);
  const docker = dockerClient(host);
  try {
    await docker.ping();
  } catch (err) {
    const problem = explainDockerError(err, host);
    // A warning, not a failure: only work that needs a sandbox fails, with this hint. Quiet (a debug
    // line) for a one-shot command: a crontab running a workflow without sandbox steps gets no mail.
    (options.quiet ? log.debug : log.warn)(`${problem.message}; sandboxes are unavailable`, {
      fix: problem.hint,
    });
    return { unavailable: { message: problem.message, hint: problem.hint } };
  }
  const dockerBackend = new DockerBackend(docker, {
    user: config.user,
    memoryMb: config.memory_mb,
    diskMb: config.disk_mb,
    tmpMb: config.tmp_mb,
    cpus: config.cpus,
    pidsLimit: config.pids_limit,
    pullTimeoutMs: config.pull_timeout,
    callTimeoutMs: config.docker_timeout,
    labels: config.labels,
    channel: config.channel,
  });
  const service = new SandboxService(dockerBackend, { db, files, config, stationId: stationId(db) });
  await service.start();
  return { service };
}
