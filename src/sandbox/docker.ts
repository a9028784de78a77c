import Docker from "dockerode";
import { Buffer } from "node:buffer";
import { PassThrough, type Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import tar from "tar-stream";
import { ulid } from "ulid";
import { StationError } from "../errors.ts";
import type {
  ContainerSpec,
  ExecRequest,
  ExecResult,
  FileEntry,
  FileRead,
  ManagedContainer,
  SandboxBackend,
} from "./backend.ts";
import { relativeToWorkspace, WORKSPACE, workspacePath } from "./paths.ts";

/** The label every container stn creates carries; nothing else is ever touched. */
export const MANAGED_LABEL = "dev.stn.managed";

/** Security and resource settings applied to every container. */
export interface DockerLimits {
  /** "uid:gid" that runs every command and owns /workspace. */
  user: string;
  memoryMb: number;
  cpus: number;
  pidsLimit: number;
  pullTimeoutMs: number;
}

// Internal commands (list, delete, kill) are small and quick; they get their own fixed bounds.
const INTERNAL_TIMEOUT_MS = 60_000;
const INTERNAL_OUTPUT_BYTES = 16 * 1024 * 1024;
// How long a killed command may take to let go of its output stream before we stop waiting.
const KILL_GRACE_MS = 5_000;
const EXEC_MARK = "STN_EXEC_ID";
// os.ModeSymlink of the Go FileMode the engine reports in X-Docker-Container-Path-Stat.
const GO_MODE_SYMLINK = 1 << 27;

/** Opens a dockerode client for a socket path or tcp:// URL (default: DOCKER_HOST, else the local socket). */
export function dockerClient(host?: string): Docker {
  if (!host) return new Docker();
  if (host.startsWith("unix://")) return new Docker({ socketPath: host.slice("unix://".length) });
  if (host.startsWith("/")) return new Docker({ socketPath: host });
  const url = new URL(host.replace(/^tcp:/, "http:"));
  return new Docker({ host: url.hostname, port: Number(url.port || 2375), protocol: "http" });
}

/** The sandbox backend over the Docker Engine API: no bind mounts, files through the archive endpoints. */
export class DockerBackend implements SandboxBackend {
  readonly docker: Docker;
  readonly #limits: DockerLimits;
  readonly #uid: number;
  readonly #gid: number;

  constructor(docker: Docker, limits: DockerLimits) {
    this.docker = docker;
    this.#limits = limits;
    [this.#uid, this.#gid] = limits.user.split(":").map(Number);
  }

  async create(spec: ContainerSpec): Promise<string> {
    const l = this.#limits;
    const container = await this.docker.createContainer({
      Image: spec.image,
      // Keeps the container alive without depending on the image's entrypoint. PID 1 is a shell so
      // the orphans of killed commands are reaped (a bare `sleep` would leave zombies that count
      // against the pids limit).
      Entrypoint: ["/bin/sh", "-c", "trap 'exit 0' TERM; while :; do sleep 2147483647 & wait $!; done"],
      Cmd: [],
      User: l.user,
      WorkingDir: WORKSPACE,
      Env: Object.entries(spec.env ?? {}).map(([k, v]) => `${k}=${v}`),
      Labels: { ...spec.labels, [MANAGED_LABEL]: "true" },
      AttachStdin: false,
      Tty: false,
      HostConfig: {
        NetworkMode: spec.network ? "bridge" : "none",
        CapDrop: ["ALL"],
        SecurityOpt: ["no-new-privileges"],
        Privileged: false,
        PidsLimit: l.pidsLimit,
        Memory: l.memoryMb * 1024 * 1024,
        MemorySwap: l.memoryMb * 1024 * 1024,
        NanoCpus: Math.round(l.cpus * 1e9),
        AutoRemove: false,
      },
    }).catch((err) => {
      throw engineError(`creating a container from ${spec.image}`, err);
    });
    try {
      // /workspace is created through the archive endpoint, owned by the sandbox user; the daemon
      // extracts it, so no capability is needed inside the container (CapDrop ALL removes CHOWN).
      const pack = tar.pack();
      pack.entry({ name: "workspace", type: "directory", mode: 0o755, uid: this.#uid, gid: this.#gid });
      pack.finalize();
      await container.putArchive(pack as unknown as Readable, { path: "/" });
      await container.start();
    } catch (err) {
      await container.remove({ force: true }).catch(() => {});
      throw engineError(`starting a container from ${spec.image}`, err);
    }
    return container.id;
  }

  async exec(containerId: string, request: ExecRequest): Promise<ExecResult> {
    const started = performance.now();
    const cmd = typeof request.cmd === "string" ? ["/bin/sh", "-c", request.cmd] : request.cmd;
    if (cmd.length === 0) {
      throw new StationError("invalid_command", "the command is empty", { status: 400, exitCode: 2 });
    }
    const mark = ulid();
    const env = { ...request.env, [EXEC_MARK]: mark };
    const container = this.docker.getContainer(containerId);
    const exec = await container.exec({
      Cmd: cmd,
      User: this.#limits.user,
      WorkingDir: workspacePath(request.cwd ?? WORKSPACE),
      Env: Object.entries(env).map(([k, v]) => `${k}=${v}`),
      AttachStdout: true,
      AttachStderr: true,
    }).catch((err) => {
      throw engineError("starting a command", err);
    });
    const stream = await exec.start({ hijack: true, stdin: false }) as unknown as Readable;
    const out = new Capped(request.maxOutputBytes);
    const err = new Capped(request.maxOutputBytes);
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    stdout.on("data", (b: Buffer) => {
      out.push(b);
      request.onOutput?.("stdout", b);
    });
    stderr.on("data", (b: Buffer) => {
      err.push(b);
      request.onOutput?.("stderr", b);
    });
    this.docker.modem.demuxStream(stream, stdout, stderr);

    let stopped: "timeout" | "canceled" | undefined;
    const ended = new Promise<void>((resolve) => {
      stream.once("end", resolve);
      stream.once("close", resolve);
      stream.once("error", () => resolve());
    });
    const stop = (why: "timeout" | "canceled") => {
      if (stopped) return;
      stopped = why;
      this.#kill(containerId, mark).catch(() => {});
      // A command that escaped the kill (it dropped our marker) must not hang the caller.
      setTimeout(() => stream.destroy(), KILL_GRACE_MS).unref?.();
    };
    const timer = setTimeout(() => stop("timeout"), request.timeoutMs);
    const onAbort = () => stop("canceled");
    if (request.signal?.aborted) onAbort();
    request.signal?.addEventListener("abort", onAbort, { once: true });
    try {
      await ended;
    } finally {
      clearTimeout(timer);
      request.signal?.removeEventListener("abort", onAbort);
    }
    if (stopped === "canceled") {
      throw new StationError("exec_canceled", "the command was canceled and killed", { status: 409 });
    }
    const info = await exec.inspect().catch(() => undefined);
    return {
      exit_code: stopped === "timeout" ? 124 : info?.ExitCode ?? -1,
      stdout: out.text(),
      stderr: err.text(),
      truncated: out.truncated || err.truncated,
      stdout_truncated: out.truncated,
      stderr_truncated: err.truncated,
      timed_out: stopped === "timeout",
      duration_ms: Math.round(performance.now() - started),
    };
  }

  /** Kills every process of one exec: they carry its marker in their environment. */
  async #kill(containerId: string, mark: string): Promise<void> {
    // Runs as the sandbox user (same uid as the command), which may signal its own processes
    // without CAP_KILL; /proc/<pid>/environ is readable for them for the same reason.
    // Stop them all first, then kill: killing one by one lets a parent shell run on for a moment.
    const script = `pids=""
      for p in /proc/[0-9]*; do
        if tr '\\0' '\\n' < "$p/environ" 2>/dev/null | grep -qx "${EXEC_MARK}=$1"; then pids="$pids \${p#/proc/}"; fi
      done
      [ -z "$pids" ] || { kill -STOP $pids; kill -9 $pids; } 2>/dev/null; true`;
    await this.#internal(containerId, ["/bin/sh", "-c", script, "kill", mark]);
  }

  /** Runs a helper command (list, delete, kill) and returns its result. */
  #internal(containerId: string, cmd: string[]): Promise<ExecResult> {
    return this.exec(containerId, {
      cmd,
      timeoutMs: INTERNAL_TIMEOUT_MS,
      maxOutputBytes: INTERNAL_OUTPUT_BYTES,
    });
  }

  async writeFile(
    containerId: string,
    path: string,
    data: Readable | Uint8Array,
    size: number,
    mode = 0o644,
  ): Promise<void> {
    const target = workspacePath(path);
    const rel = relativeToWorkspace(target);
    if (rel === "") throw isDirectory(path);
    const pack = tar.pack();
    const parts = rel.split("/");
    for (let i = 1; i < parts.length; i++) {
      pack.entry({
        name: parts.slice(0, i).join("/"),
        type: "directory",
        mode: 0o755,
        uid: this.#uid,
        gid: this.#gid,
      });
    }
    const entryDone = new Promise<void>((resolve, reject) => {
      const entry = pack.entry({ name: rel, size, mode, uid: this.#uid, gid: this.#gid }, (err) => {
        if (err) reject(err);
        else resolve();
      });
      if (data instanceof Uint8Array) {
        entry.end(Buffer.from(data.buffer, data.byteOffset, data.byteLength));
      } else {
        pipeline(data, entry).catch(reject);
      }
    });
    entryDone.then(() => pack.finalize(), (err) => pack.destroy(err));
    const container = this.docker.getContainer(containerId);
    try {
      await Promise.all([container.putArchive(pack as unknown as Readable, { path: WORKSPACE }), entryDone]);
    } catch (err) {
      if (err instanceof StationError) throw err;
      const message = (err as Error).message ?? String(err);
      if (/size mismatch|too short|premature/i.test(message)) {
        throw new StationError(
          "size_mismatch",
          `the data for ${target} did not have the announced ${size} bytes`,
          {
            status: 400,
          },
        );
      }
      throw engineError(`writing ${target}`, err);
    }
  }

  async readFile(containerId: string, path: string, maxBytes: number): Promise<FileRead> {
    const target = workspacePath(path);
    await this.#refuseLinkedParents(containerId, path, target);
    return await this.#openArchive(containerId, path, target, maxBytes);
  }

  /**
   * The engine reads archives as root and follows symlinks in parent directories, so a link planted
   * in the workspace (up -> /) would expose files the sandbox user cannot read. Each parent is
   * looked at first (HEAD on the archive endpoint: cheap, and unlike an exec it does not wait for
   * the container lock an open archive stream holds). A final symlink is refused by #openArchive.
   */
  async #refuseLinkedParents(containerId: string, path: string, target: string): Promise<void> {
    const parts = relativeToWorkspace(target).split("/").slice(0, -1);
    const container = this.docker.getContainer(containerId);
    await Promise.all(parts.map(async (_, i) => {
      const dir = `${WORKSPACE}/${parts.slice(0, i + 1).join("/")}`;
      const res = await container.infoArchive({ path: dir }).catch((err) => {
        if (err?.statusCode === 404) throw notFound(path);
        throw engineError(`reading ${target}`, err);
      }) as unknown as { headers: Record<string, string>; resume?: () => void };
      res.resume?.();
      const stat = JSON.parse(atob(res.headers["x-docker-container-path-stat"] ?? "e30=")) as {
        mode?: number;
        linkTarget?: string;
      };
      if (((stat.mode ?? 0) & GO_MODE_SYMLINK) !== 0) {
        throw new StationError(
          "path_outside_workspace",
          `path ${JSON.stringify(path)} is not allowed: ${dir} is a symlink (to ${stat.linkTarget ?? "?"})`,
          { status: 400, hint: "read the file through its real path inside /workspace", exitCode: 2 },
        );
      }
    }));
  }

  async #openArchive(containerId: string, path: string, target: string, maxBytes: number): Promise<FileRead> {
    const container = this.docker.getContainer(containerId);
    const archive = await container.getArchive({ path: target }).catch((err) => {
      if (err?.statusCode === 404) throw notFound(path);
      throw engineError(`reading ${target}`, err);
    }) as unknown as Readable;
    const extract = tar.extract();
    return await new Promise<FileRead>((resolve, reject) => {
      const fail = (err: unknown) => {
        archive.destroy();
        reject(err);
      };
      extract.once("entry", (header, stream, next) => {
        if (header.type === "directory") return fail(isDirectory(path));
        if (header.type !== "file" && header.type !== "contiguous-file") {
          return fail(
            new StationError("not_a_file", `${target} is a ${header.type}, not a regular file`, {
              status: 400,
            }),
          );
        }
        const size = header.size ?? 0;
        if (size > maxBytes) return fail(tooLarge(target, size, maxBytes));
        // Once the file's bytes are through, the rest of the archive is not needed.
        stream.once("end", () => {
          next();
          archive.destroy();
        });
        resolve({ size, stream: stream as unknown as Readable });
      });
      extract.once("error", fail);
      archive.once("error", fail);
      archive.pipe(extract);
    });
  }

  async list(containerId: string, path: string, recursive: boolean): Promise<FileEntry[]> {
    const dir = workspacePath(path);
    const depth = recursive ? "" : "-maxdepth 1";
    const script = `[ -e "$1" ] || exit 3; [ -d "$1" ] || exit 4
      find "$1" -mindepth 1 ${depth} -exec stat -c '%n\t%s\t%a\t%Y\t%F' {} +`;
    const res = await this.#internal(containerId, ["/bin/sh", "-c", script, "list", dir]);
    if (res.exit_code === 3) throw notFound(path);
    if (res.exit_code === 4) {
      throw new StationError("not_a_directory", `${dir} is not a directory`, { status: 400 });
    }
    if (res.exit_code !== 0) throw commandFailed(`listing ${dir}`, res);
    const prefix = dir + "/";
    return res.stdout.split("\n").filter((line) => line !== "").map((line) => {
      const [name, size, mode, mtime, kind] = line.split("\t");
      return {
        path: name.startsWith(prefix) ? name.slice(prefix.length) : name,
        type: kind === "directory"
          ? "dir"
          : kind === "symbolic link"
          ? "symlink"
          : kind?.includes("regular")
          ? "file"
          : "other",
        size: Number(size),
        mode,
        mtime: new Date(Number(mtime) * 1000).toISOString(),
      } satisfies FileEntry;
    }).sort((a, b) => a.path.localeCompare(b.path));
  }

  async delete(containerId: string, path: string, recursive: boolean): Promise<void> {
    const target = workspacePath(path);
    if (target === WORKSPACE) {
      throw new StationError("path_outside_workspace", `refusing to delete ${WORKSPACE} itself`, {
        status: 400,
        hint: "delete the entries inside it, or close the sandbox",
        exitCode: 2,
      });
    }
    const script = `[ -e "$1" ] || [ -L "$1" ] || exit 3
      if [ -d "$1" ] && [ ! -L "$1" ] && [ "$2" != r ]; then exit 4; fi
      rm -rf -- "$1"`;
    const res = await this.#internal(containerId, [
      "/bin/sh",
      "-c",
      script,
      "rm",
      target,
      recursive ? "r" : "",
    ]);
    if (res.exit_code === 3) throw notFound(path);
    if (res.exit_code === 4) {
      throw new StationError("is_a_directory", `${target} is a directory`, {
        status: 400,
        hint: "delete it with recursive (API ?recursive=1, CLI -r)",
      });
    }
    if (res.exit_code !== 0) throw commandFailed(`deleting ${target}`, res);
  }

  async destroy(containerId: string): Promise<void> {
    await this.docker.getContainer(containerId).remove({ force: true }).catch((err) => {
      if (err?.statusCode === 404) return;
      // 409: removal already in progress.
      if (err?.statusCode === 409) return;
      throw engineError("removing a container", err);
    });
  }

  async ensureRunning(containerId: string): Promise<void> {
    const info = await this.docker.getContainer(containerId).inspect();
    if (!info.State.Running) await this.docker.getContainer(containerId).start();
  }

  async listManaged(labels: Record<string, string>): Promise<ManagedContainer[]> {
    const filters = [`${MANAGED_LABEL}=true`, ...Object.entries(labels).map(([k, v]) => `${k}=${v}`)];
    const found = await this.docker.listContainers({ all: true, filters: { label: filters } });
    return found.map((c) => ({ id: c.Id, labels: c.Labels ?? {}, running: c.State === "running" }));
  }

  async ensureImage(image: string): Promise<void> {
    const present = await this.docker.getImage(image).inspect().then(() => true, () => false);
    if (present) return;
    try {
      const stream = await this.docker.pull(image);
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
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
      const reason = ((err as Error).message ?? String(err)).replace(/^\(HTTP code \d+\) [^-]*- /, "").trim();
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

/** Collects a stream's bytes up to a cap, remembering whether more came. */
class Capped {
  readonly #cap: number;
  readonly #chunks: Buffer[] = [];
  #size = 0;
  truncated = false;

  constructor(cap: number) {
    this.#cap = cap;
  }

  push(chunk: Buffer): void {
    const room = this.#cap - this.#size;
    if (chunk.length > room) this.truncated = true;
    if (room <= 0) return;
    const kept = chunk.length > room ? chunk.subarray(0, room) : chunk;
    this.#chunks.push(kept);
    this.#size += kept.length;
  }

  text(): string {
    return new TextDecoder().decode(Buffer.concat(this.#chunks));
  }
}

function notFound(path: string): StationError {
  return new StationError("file_not_found", `no such file or directory in the sandbox: ${path}`, {
    status: 404,
  });
}

function isDirectory(path: string): StationError {
  return new StationError("is_a_directory", `${path} is a directory, not a file`, { status: 400 });
}

/** The error for a file over a size limit. */
export function tooLarge(path: string, size: number, max: number): StationError {
  return new StationError("file_too_large", `${path} is ${size} bytes, over the ${max}-byte limit`, {
    status: 413,
    hint: "raise sandbox.max_file_size, or move large files with stage/publish through the file store",
  });
}

function commandFailed(what: string, res: ExecResult): StationError {
  return new StationError(
    "sandbox_command_failed",
    `${what} failed (exit ${res.exit_code}): ${res.stderr.trim()}`,
    {
      status: 500,
    },
  );
}

/** Turns an engine failure into a StationError; a vanished container is a 410. */
function engineError(what: string, err: unknown): StationError {
  if (err instanceof StationError) return err;
  const e = err as { statusCode?: number; message?: string; json?: { message?: string } };
  const reason = e?.json?.message ?? e?.message ?? String(err);
  if (e?.statusCode === 404 && /container/i.test(reason)) {
    return new StationError("sandbox_gone", `${what}: the sandbox container no longer exists`, {
      status: 410,
      hint: "open a new sandbox",
    });
  }
  if (e?.statusCode === 409 && /not running/i.test(reason)) {
    return new StationError("sandbox_not_running", `${what}: the sandbox container is not running`, {
      status: 409,
    });
  }
  return new StationError("docker_error", `${what}: ${reason}`, {
    status: 502,
    hint: "is the Docker Engine running and reachable (docker info)?",
  });
}
