/**
 * SandboxService: sessions recorded in the ledger, adopted after a restart, closed when idle; compute mode.
 */

import { ulid } from "ulid";
import type { Config } from "../config/schema.ts";
import type { Database } from "../db/database.ts";
import { errorMessage, StationError } from "../errors.ts";
import type { FileInfo, FileStore } from "../files/store.ts";
import { log } from "../log.ts";
import { traceMethods } from "../telemetry/tracing.ts";
import type {
  ExecResult,
  FileContent,
  FileEntry,
  FileRead,
  OutputStream,
  SandboxBackend,
} from "./backend.ts";
import { runCode, type RunRequest, type RunResult } from "./compute.ts";
import { tooLarge } from "./errors.ts";
import { chooseImage, poolSizes } from "./images.ts";
import { LABELS } from "./labels.ts";
import {
  getSession,
  idleSessions,
  insertSession,
  listSessions,
  markClosed,
  openWorkflowSession,
  type SessionRecord,
  sessionsOfEndedRuns,
  touchSession,
} from "./ledger.ts";
import { WORKSPACE } from "./paths.ts";
import { PackageChecks } from "./packages.ts";
import { WarmPool } from "./pool.ts";
import { publishFile, type PublishOptions, stageFile, type TransferEnds } from "./transfer.ts";

export type { RunRequest, RunResult } from "./compute.ts";

export type SandboxConfig = Config["sandbox"];

/** Asking for a session. A workflow-scoped session is shared by every step and agent of its run. */
export interface OpenRequest {
  runtime?: string;
  image?: string;
  network?: boolean;
  scope?: "workflow" | "agent";
  run_id?: string;
}

/** A session as the API shows it. */
export type SessionView = SessionRecord & { workdir: string };

/** One command in a session. */
export interface SessionExec {
  cmd: string[] | string;
  cwd?: string;
  env?: Record<string, string>;
  timeout_ms?: number;
  signal?: AbortSignal;
  onOutput?: (stream: OutputStream, chunk: Uint8Array) => void;
}

/** What startup recovery did with the containers it found. */
export interface RecoveryReport {
  adopted: string[];
  removed: string[];
  lost: string[];
}

const now = () => new Date().toISOString();
// How often workflow sessions of ended runs are looked for.
const RUN_SWEEP_MS = 2_000;

/** What a SandboxService keeps its sessions with: the ledger, the file store, its settings and station. */
export interface SandboxServiceOptions {
  db: Database;
  files: FileStore;
  config: SandboxConfig;
  stationId: string;
}

/**
 * Sandbox sessions: containers recorded in the ledger, re-adopted after a restart, closed when idle,
 * and the compute-mode `run`. All container work goes through the backend.
 */
export class SandboxService {
  readonly backend: SandboxBackend;
  readonly config: SandboxConfig;
  /** Ready containers for opens without a network (`sandbox.pool`). */
  readonly pool: WarmPool;
  /** Whether an image carries an agent's `pip_packages` (checked once per image). */
  readonly packages: PackageChecks;
  readonly #db: Database;
  readonly #files: FileStore;
  readonly #stationId: string;
  readonly #opening = new Map<string, Promise<{ session: SessionView; created: boolean }>>();
  #reaper?: ReturnType<typeof setInterval>;
  #runSweeper?: ReturnType<typeof setInterval>;

  constructor(backend: SandboxBackend, { db, files, config, stationId }: SandboxServiceOptions) {
    this.backend = backend;
    this.#db = db;
    this.#files = files;
    this.config = config;
    this.#stationId = stationId;
    this.pool = new WarmPool(backend, poolSizes(config), stationId);
    this.packages = new PackageChecks(backend, stationId);
  }

  /** Re-adopts the containers of live sessions, removes the rest, and starts the idle reaper. */
  async start(): Promise<RecoveryReport> {
    const report = await this.recover();
    // After recovery, which removes a crashed process's pooled containers with the other orphans.
    this.pool.start();
    const reaper = setInterval(() => {
      this.reapIdle().catch((err) => log.warn("sandbox idle reaper failed", { error: errorMessage(err) }));
    }, this.config.cleanup_interval);
    Deno.unrefTimer(reaper);
    this.#reaper = reaper;
    // The engine records run ends in the ledger; a workflow's container goes soon after.
    const runSweeper = setInterval(() => {
      this.closeEndedRuns().catch((err) =>
        log.warn("closing sandboxes of ended runs failed", { error: errorMessage(err) })
      );
    }, RUN_SWEEP_MS);
    Deno.unrefTimer(runSweeper);
    this.#runSweeper = runSweeper;
    return report;
  }

  /**
   * Stops the reaper, removes the pool's idle containers and closes the backend's channels; sessions
   * (and their containers) live on.
   */
  async stop(): Promise<void> {
    if (this.#reaper !== undefined) clearInterval(this.#reaper);
    if (this.#runSweeper !== undefined) clearInterval(this.#runSweeper);
    await this.pool.stop();
    await this.backend.close?.();
  }

  /**
   * Matches this station's managed containers against the ledger. A running container of an open session
   * is adopted; a stopped one (a Docker restart, a reboot) lost its files with its in-memory /workspace,
   * so it is removed and its session closed as `container_lost` rather than handed back empty.
   */
  async recover(): Promise<RecoveryReport> {
    const report: RecoveryReport = { adopted: [], removed: [], lost: [] };
    const station = { [LABELS.station]: this.#stationId };
    const containers = await this.backend.listManaged(station);
    const open = new Map(listSessions(this.#db).map((s) => [s.container_id, s]));
    const seen = new Set<string>();
    for (const c of containers) {
      if (this.pool.holds(c.id)) continue;
      const session = open.get(c.id);
      if (session && c.running) {
        seen.add(session.id);
        report.adopted.push(session.id);
        continue;
      }
      await this.backend.destroy(c.id);
      report.removed.push(c.labels[LABELS.session] ?? c.id);
    }
    for (const s of open.values()) {
      if (seen.has(s.id)) continue;
      markClosed(this.#db, s.id, "container_lost", now());
      report.lost.push(s.id);
    }
    // A container removed without its volume (by hand, `docker rm` without -v) leaves the volume behind.
    await this.backend.removeOrphanVolumes(station).catch((err) =>
      log.warn("removing volumes of removed sandbox containers failed", { error: errorMessage(err) })
    );
    if (report.adopted.length + report.removed.length + report.lost.length > 0) {
      log.info("sandbox sessions recovered", {
        adopted: report.adopted.length,
        removed: report.removed.length,
        lost: report.lost.length,
      });
    }
    return report;
  }

  /** Opens a session (or returns the run's workflow session if it exists). */
  async open(request: OpenRequest): Promise<{ session: SessionView; created: boolean }> {
    const scope = request.scope ?? "agent";
    if (scope === "workflow" && !request.run_id) {
      throw new StationError("run_id_required", "a workflow-scoped sandbox needs a run_id", {
        status: 400,
        exitCode: 2,
      });
    }
    if (scope !== "workflow") return await this.#create(request, scope);
    const key = request.run_id!;
    // Steps of one run may ask at the same moment; they must share one container.
    const pending = this.#opening.get(key);
    if (pending) return { session: (await pending).session, created: false };
    const existing = openWorkflowSession(this.#db, key);
    if (existing) return { session: view(existing), created: false };
    const opening = this.#create(request, scope).finally(() => this.#opening.delete(key));
    this.#opening.set(key, opening);
    return await opening;
  }

  async #create(
    request: OpenRequest,
    scope: "workflow" | "agent",
  ): Promise<{ session: SessionView; created: boolean }> {
    const network = request.network ?? false;
    if (network && !this.config.allow_network) {
      throw new StationError("network_not_allowed", "this station does not give sandboxes a network", {
        status: 403,
        hint: "set sandbox.allow_network: true in config.yaml (STN_SANDBOX_ALLOW_NETWORK=true)",
      });
    }
    const { image, runtime } = chooseImage(this.config, request);
    const id = `sbx_${ulid()}`;
    const createdAt = now();
    // A pooled container keeps its `pool` labels (Docker cannot change them); the ledger links it to the session.
    const pooled = network ? undefined : this.pool.take(image);
    if (!pooled) await this.backend.ensureImage(image);
    const containerId = pooled ?? await this.backend.create({
      image,
      network,
      labels: {
        [LABELS.station]: this.#stationId,
        [LABELS.session]: id,
        [LABELS.scope]: scope,
        [LABELS.run]: request.run_id ?? "",
        [LABELS.createdAt]: createdAt,
      },
    });
    const record = {
      id,
      container_id: containerId,
      image,
      runtime,
      scope,
      run_id: request.run_id ?? null,
      network,
      created_at: createdAt,
      last_used_at: createdAt,
    };
    try {
      insertSession(this.#db, record);
    } catch (err) {
      await this.backend.destroy(containerId);
      throw err;
    }
    return { session: view(getSession(this.#db, id)!), created: true };
  }

  /** An open session; 404 when unknown, 410 when closed. */
  get(id: string): SessionView {
    const s = getSession(this.#db, id);
    if (!s) {
      throw new StationError("sandbox_not_found", `no sandbox ${id}`, {
        status: 404,
        hint: "list open sandboxes with `stn sandbox list`",
      });
    }
    if (s.status !== "open") {
      throw new StationError("sandbox_closed", `sandbox ${id} is closed (${s.close_reason})`, {
        status: 410,
        hint: "open a new one with `stn sandbox open`",
      });
    }
    return view(s);
  }

  /** Sessions, newest first (only open ones unless all). */
  list(all = false): SessionView[] {
    return listSessions(this.#db, all).map(view);
  }

  #use(id: string): SessionView {
    const s = this.get(id);
    touchSession(this.#db, id, now());
    return s;
  }

  /** Runs a command in a session. */
  async exec(id: string, request: SessionExec): Promise<ExecResult> {
    const s = this.#use(id);
    return await this.backend.exec(s.container_id, {
      cmd: request.cmd,
      cwd: request.cwd,
      env: request.env,
      timeoutMs: request.timeout_ms ?? this.config.exec_timeout,
      maxOutputBytes: this.config.max_output_bytes,
      signal: request.signal,
      onOutput: request.onOutput,
    });
  }

  /** Writes a file of at most sandbox.max_file_size bytes. */
  async writeFile(id: string, path: string, content: FileContent): Promise<void> {
    const { size } = content;
    if (size > this.config.max_file_size) throw tooLarge(path, size, this.config.max_file_size);
    const s = this.#use(id);
    await this.backend.writeFile(s.container_id, path, content);
  }

  /** Opens a file of at most sandbox.max_file_size bytes (or the given smaller cap). */
  async readFile(id: string, path: string, maxBytes = this.config.max_file_size): Promise<FileRead> {
    const s = this.#use(id);
    return await this.backend.readFile(s.container_id, path, Math.min(maxBytes, this.config.max_file_size));
  }

  /** Lists a directory of the workspace. */
  async listFiles(id: string, path: string, recursive: boolean): Promise<FileEntry[]> {
    return await this.backend.list(this.#use(id).container_id, path, recursive);
  }

  /** Deletes a file (or a directory with recursive). */
  async deleteFile(id: string, path: string, recursive: boolean): Promise<void> {
    return await this.backend.delete(this.#use(id).container_id, path, recursive);
  }

  /** Copies a file from the file store into the workspace (see transfer.ts). */
  async stage(
    id: string,
    fileKey: string,
    destination: string,
  ): Promise<{ path: string; size_bytes: number }> {
    return await stageFile(this.#ends(), this.#use(id), fileKey, destination);
  }

  /** Copies a workspace file into the file store (see transfer.ts: overwrite, and ttlMs, 0 = never expires). */
  async publish(id: string, path: string, options: PublishOptions = {}): Promise<FileInfo> {
    return await publishFile(this.#ends(), this.#use(id), path, options);
  }

  #ends(): TransferEnds {
    return { backend: this.backend, files: this.#files };
  }

  /** Removes a session's container and marks it closed; closing a closed session is a no-op. */
  async close(id: string, reason = "closed"): Promise<SessionRecord> {
    const s = getSession(this.#db, id);
    if (!s) throw new StationError("sandbox_not_found", `no sandbox ${id}`, { status: 404 });
    if (s.status === "open") {
      await this.backend.destroy(s.container_id);
      markClosed(this.#db, id, reason, now());
    }
    return getSession(this.#db, id)!;
  }

  /** Closes the workflow session of a run (called when the run ends). */
  async closeRun(runId: string): Promise<void> {
    const s = openWorkflowSession(this.#db, runId);
    if (s) await this.close(s.id, "run_ended");
  }

  /** Closes the workflow sessions of runs that have ended; returns their ids. */
  async closeEndedRuns(): Promise<string[]> {
    const closed: string[] = [];
    for (const s of sessionsOfEndedRuns(this.#db)) {
      await this.close(s.id, "run_ended");
      closed.push(s.id);
    }
    return closed;
  }

  /** Closes sessions idle longer than sandbox.idle_timeout; returns their ids. */
  async reapIdle(at = Date.now()): Promise<string[]> {
    const cutoff = new Date(at - this.config.idle_timeout).toISOString();
    const closed: string[] = [];
    for (const s of idleSessions(this.#db, cutoff)) {
      await this.close(s.id, "idle");
      closed.push(s.id);
    }
    return closed;
  }

  /** Compute mode: runs code in a fresh container that is always removed afterwards. */
  run(request: RunRequest): Promise<RunResult> {
    return runCode(this.backend, this.config, this.#stationId, request);
  }
}

traceMethods(SandboxService, "sandbox", "stn.sandbox.id", [
  "open",
  "exec",
  "writeFile",
  "readFile",
  "listFiles",
  "deleteFile",
  "stage",
  "publish",
  "close",
  "run",
]);

function view(s: SessionRecord): SessionView {
  return { ...s, workdir: WORKSPACE };
}
