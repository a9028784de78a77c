/** The sandbox backend over the Docker Engine API: hardened containers, no bind mounts. */

import Docker from "dockerode";
import { Buffer } from "node:buffer";
import { posix } from "node:path";
import type { Readable } from "node:stream";
import tar from "tar-stream";
import { errorMessage, StationError } from "../errors.ts";
import type {
  ContainerSpec,
  ExecRequest,
  ExecResult,
  FileContent,
  FileEntry,
  FileRead,
  ManagedContainer,
  SandboxBackend,
} from "./backend.ts";
import { deadline } from "./deadline.ts";
import { WORKSPACE, workspacePath } from "./paths.ts";
import { removeOrphanVolumes, storageHostConfig, SUPERVISOR_DIR } from "./disk.ts";
import { diskFull, engineError, isNoSpace } from "./errors.ts";
import { SandboxChannels } from "./channel/channels.ts";
import { channelExec } from "./channel/exec.ts";
import { channelDelete, channelList, channelWrite } from "./channel/files.ts";
import { channelRead } from "./channel/read.ts";
import { SUPERVISOR_PATH, supervisorBinary } from "./channel/supervisor_binary.ts";
import { type ExecContext, runExec } from "./exec.ts";
import { readWorkspaceFile } from "./reader.ts";
import { deleteWorkspacePath, listWorkspace, writeWorkspaceFile } from "./workspace_files.ts";

/** The label every container stn creates carries; nothing else is ever touched. */
export const MANAGED_LABEL = "dev.stn.managed";

/** Security and resource settings applied to every container. */
export interface DockerLimits {
  /** "uid:gid" that runs every command and owns /workspace. */
  user: string;
  /** Memory of the processes (MiB); the container's limit adds what /workspace, /tmp and /dev/shm may hold. */
  memoryMb: number;
  /** Size of /workspace (MiB, a tmpfs). */
  diskMb: number;
  /** Size of /tmp (MiB, a tmpfs). */
  tmpMb: number;
  cpus: number;
  pidsLimit: number;
  pullTimeoutMs: number;
  /** Deadline of each Docker Engine call made for a request (default 30 s). */
  callTimeoutMs?: number;
  /** Extra labels on every container (sandbox.labels), under stn's own. */
  labels?: Record<string, string>;
  /** Talk to each container through its supervisor's channel (sandbox.channel; default true). */
  channel?: boolean;
  /** How long a container whose channel failed uses docker exec before the channel is tried again. */
  channelRetryMs?: number;
}

const DEFAULT_CALL_TIMEOUT_MS = 30_000;

/** Opens a dockerode client for a socket path or tcp:// URL (default: DOCKER_HOST, else the local socket). */
export function dockerClient(host?: string): Docker {
  if (!host) return new Docker();
  if (host.startsWith("unix://")) return new Docker({ socketPath: host.slice("unix://".length) });
  if (host.startsWith("/")) return new Docker({ socketPath: host });
  const url = new URL(host.replace(/^tcp:/, "http:"));
  return new Docker({ host: url.hostname, port: Number(url.port || 2375), protocol: "http" });
}

/**
 * The sandbox backend over the Docker Engine API, with no bind mounts. Each container's operations go
 * through its supervisor's channel (one long-lived attached exec, src/sandbox/channel/) and, when that
 * is off or down, through one docker exec per operation as the sandbox user.
 */
export class DockerBackend implements SandboxBackend {
  readonly docker: Docker;
  readonly #limits: DockerLimits;
  readonly #exec: ExecContext;
  readonly #channels: SandboxChannels;

  constructor(docker: Docker, limits: DockerLimits) {
    this.docker = docker;
    this.#limits = limits;
    const [uid, gid] = limits.user.split(":").map(Number);
    this.#exec = { docker, uid, gid, callTimeoutMs: limits.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS };
    this.#channels = new SandboxChannels(this.#exec, {
      enabled: limits.channel ?? true,
      retryMs: limits.channelRetryMs,
    });
  }

  /** Bounds one engine call by the call deadline (504 sandbox_timeout past it). */
  #call<T>(promise: Promise<T>, what: string): Promise<T> {
    return deadline(promise, this.#exec.callTimeoutMs, what);
  }

  async create(spec: ContainerSpec): Promise<string> {
    const l = this.#limits;
    const { uid, gid } = this.#exec;
    const labels = { ...l.labels, ...spec.labels, [MANAGED_LABEL]: "true" };
    const image = await this.#call(this.docker.getImage(spec.image).inspect(), `inspecting ${spec.image}`)
      .catch((err) => {
        throw engineError(`inspecting ${spec.image}`, err);
      });
    const imageVolumes = Object.keys(image.Config?.Volumes ?? {});
    const container = await this.#call(
      this.docker.createContainer({
        Image: spec.image,
        // Keeps the container alive without depending on the image's entrypoint. PID 1 is a shell so
        // the orphans of killed commands are reaped (a bare `sleep` would leave zombies that count
        // against the pids limit).
        Entrypoint: ["/bin/sh", "-c", "trap 'exit 0' TERM; while :; do sleep 2147483647 & wait $!; done"],
        Cmd: [],
        User: l.user,
        WorkingDir: WORKSPACE,
        Env: Object.entries(spec.env ?? {}).map(([k, v]) => `${k}=${v}`),
        Labels: labels,
        AttachStdin: false,
        Tty: false,
        HostConfig: {
          NetworkMode: spec.network ? "bridge" : "none",
          CapDrop: ["ALL"],
          SecurityOpt: ["no-new-privileges"],
          Privileged: false,
          PidsLimit: l.pidsLimit,
          ...storageHostConfig(l, { uid, gid, labels, imageVolumes }),
          NanoCpus: Math.round(l.cpus * 1e9),
          AutoRemove: false,
        },
      }),
      `creating a container from ${spec.image}`,
    ).catch((err) => {
      throw engineError(`creating a container from ${spec.image}`, err);
    });
    try {
      // The supervisor goes into its volume through the archive endpoint, owned by root and read-only,
      // so the sandbox user cannot replace it; the daemon extracts it, so no capability is needed inside
      // the container. (/workspace is a tmpfs mounted owned by the sandbox user.)
      const pack = tar.pack();
      pack.entry({ name: ".", type: "directory", mode: 0o555, uid: 0, gid: 0 });
      pack.entry(
        { name: posix.basename(SUPERVISOR_PATH), mode: 0o555, uid: 0, gid: 0 },
        Buffer.from(supervisorBinary()),
      );
      pack.finalize();
      // tar-stream's Pack is a Readable at run time; its types name a streamx stream, which dockerode's do not take.
      await this.#call(
        container.putArchive(pack as unknown as Readable, { path: SUPERVISOR_DIR }),
        "placing the supervisor",
      );
      await this.#call(container.start(), "starting a container");
    } catch (err) {
      await container.remove({ force: true, v: true }).catch(() => {});
      throw engineError(`starting a container from ${spec.image}`, err);
    }
    // The channel opens while the caller records its session, so the first operation finds it ready
    // (its Docker exec, ~50 ms, is otherwise paid by that operation; a pooled container has it ahead).
    void this.#channels.get(container.id);
    return container.id;
  }

  // Each operation: over the channel, else over docker exec. A command is never run twice; a file
  // operation the channel lost midway is done again over docker exec (a write only when its bytes are
  // at hand, not a stream already partly sent).
  exec(containerId: string, request: ExecRequest): Promise<ExecResult> {
    return this.#channels.run(
      containerId,
      (conn) => channelExec(conn, request),
      () => runExec(this.#exec, containerId, request),
      false,
    );
  }

  writeFile(containerId: string, path: string, content: FileContent): Promise<void> {
    return this.#channels.run(
      containerId,
      (conn) => channelWrite(conn, this.#exec.callTimeoutMs, path, content),
      () => writeWorkspaceFile(this.#exec, containerId, path, content),
      content.data instanceof Uint8Array,
    ).catch((err) => {
      throw isNoSpace(err) ? diskFull(workspacePath(path), this.#limits.diskMb) : err;
    });
  }

  readFile(containerId: string, path: string, maxBytes: number): Promise<FileRead> {
    return this.#channels.run(
      containerId,
      (conn) => channelRead(conn, this.#exec.callTimeoutMs, path, maxBytes),
      () => readWorkspaceFile(this.#exec, containerId, path, maxBytes),
      true,
    );
  }

  list(containerId: string, path: string, recursive: boolean): Promise<FileEntry[]> {
    return this.#channels.run(
      containerId,
      (conn) => channelList(conn, this.#exec.callTimeoutMs, path, recursive),
      () => listWorkspace(this.#exec, containerId, path, recursive),
      true,
    );
  }

  delete(containerId: string, path: string, recursive: boolean): Promise<void> {
    return this.#channels.run(
      containerId,
      (conn) => channelDelete(conn, this.#exec.callTimeoutMs, path, recursive),
      () => deleteWorkspacePath(this.#exec, containerId, path, recursive),
      true,
    );
  }

  /** Closes every channel (stn is stopping; a later operation opens its container's channel again). */
  close(): Promise<void> {
    this.#channels.closeAll();
    return Promise.resolve();
  }

  async destroy(containerId: string): Promise<void> {
    this.#channels.forget(containerId);
    // v: its anonymous volume (the supervisor's) goes with it.
    const removed = this.docker.getContainer(containerId).remove({ force: true, v: true });
    await this.#call(removed, "removing a container").catch((err) => {
      if (err?.statusCode === 404) return;
      // 409: removal already in progress.
      if (err?.statusCode === 409) return;
      throw engineError("removing a container", err);
    });
  }

  removeOrphanVolumes(labels: Record<string, string>): Promise<string[]> {
    return this.#call(
      removeOrphanVolumes(this.docker, { [MANAGED_LABEL]: "true", ...labels }),
      "removing volumes of removed containers",
    );
  }

  async listManaged(labels: Record<string, string>): Promise<ManagedContainer[]> {
    const filters = [`${MANAGED_LABEL}=true`, ...Object.entries(labels).map(([k, v]) => `${k}=${v}`)];
    const found = await this.#call(
      this.docker.listContainers({ all: true, filters: { label: filters } }),
      "listing containers",
    );
    return found.map((c) => ({ id: c.Id, labels: c.Labels ?? {}, running: c.State === "running" }));
  }

  async ensureImage(image: string): Promise<void> {
    const present = await this.#call(this.docker.getImage(image).inspect(), `looking for image ${image}`)
      .then(() => true, (err) => {
        if (err instanceof StationError) throw err;
        return false;
      });
    if (present) return;
    try {
      const stream = await this.#call(this.docker.pull(image), `pulling ${image}`);
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          // dockerode types pull's answer as NodeJS.ReadableStream (no destroy()); it is a Readable.
          (stream as unknown as Readable).destroy();
          reject(new Error(`no answer within ${Math.round(this.#limits.pullTimeoutMs / 1000)}s`));
        }, this.#limits.pullTimeoutMs);
        this.docker.modem.followProgress(stream, (err: Error | null) => {
          clearTimeout(timer);
          if (err) reject(err);
          else resolve();
        });
      });
    } catch (err) {
      const reason = (errorMessage(err) ?? String(err)).replace(/^\(HTTP code \d+\) [^-]*- /, "").trim();
      throw new StationError(
        "image_unavailable",
        `sandbox image ${JSON.stringify(image)} is not on this Docker host and pulling it failed: ${reason}`,
        {
          status: 503,
          hint:
            `provide it locally (docker build -t ${image} …, docker load, or scripts/images/ in the stn ` +
            `checkout), or map the runtime to an image you have with sandbox.images in config.yaml`,
        },
      );
    }
  }
}
