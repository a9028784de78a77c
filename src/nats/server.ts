/**
 * ManagedNatsServer: a nats-server child process with JetStream, on loopback, behind generated credentials.
 */

import { dirname, join } from "node:path";
import { errorMessage, StationError } from "../errors.ts";
import { sleep, within } from "../lib/async.ts";
import { log } from "../log.ts";
import { findProgram } from "../lib/programs.ts";
import { natsServerNotFound } from "./locate.ts";
import { randomHex } from "../lib/hex.ts";
import { makePrivateDir, PRIVATE_FILE_MODE } from "../lib/private_files.ts";
import { isAlive } from "../lib/process_alive.ts";

export interface ManagedNatsOptions {
  /** nats-server binary: a name (looked up on PATH, then /usr/sbin and the other standard dirs) or a path. */
  bin: string;
  /** JetStream store directory. */
  storeDir: string;
  /** File recording the child's pid, so a crashed stn's orphan can be stopped on the next start. */
  pidFile: string;
  /** How long to wait for "Server is ready". */
  startTimeoutMs?: number;
  /** How long to wait when another live stn owns the store dir (0 = refuse at once). */
  busyWaitMs?: number;
  /** Exit code of the `station_home_busy` error when the wait runs out (default 1). */
  busyExitCode?: number;
}

const LISTEN_LINE = /Listening for client connections on ([^\s]+):(\d+)/;
const TAIL_LINES = 20;

/** The user and password the managed server accepts; generated at each start, never logged. */
export interface NatsCredentials {
  user: string;
  password: string;
}

/** The managed server's config file: next to its pid file (run/nats.pid → run/nats.conf). */
export function authConfigPath(pidFile: string): string {
  return pidFile.replace(/(\.pid)?$/, ".conf");
}

/**
 * Generates fresh credentials and writes them as a nats-server config file only this user can read.
 * They go to nats-server through that file, not its command line, which any local user sees in `ps`.
 */
function writeAuthConfig(path: string): NatsCredentials {
  const credentials = { user: "stn", password: randomHex(32) };
  removeFile(path); // a mode is only applied when a file is created
  Deno.writeTextFileSync(
    path,
    "# Written by stn at each start of its managed nats-server; clients must present these.\n" +
      `authorization {\n  user: "${credentials.user}"\n  password: "${credentials.password}"\n}\n`,
    { mode: 0o600 },
  );
  Deno.chmodSync(path, 0o600);
  return credentials;
}

/** The credentials in a config file writeAuthConfig wrote (for tools that talk to the managed server). */
export function readAuthConfig(path: string): NatsCredentials {
  const text = Deno.readTextFileSync(path);
  const [user, password] = [/user: "([^"]*)"/, /password: "([^"]*)"/].map((re) => re.exec(text)?.[1]);
  if (user === undefined || password === undefined) {
    throw new StationError("nats_credentials_unreadable", `${path} holds no NATS user and password`);
  }
  return { user, password };
}

/** A nats-server child process with JetStream, bound to loopback on a free port, behind generated credentials. */
export class ManagedNatsServer {
  /** Resolves when the child exits, for whatever reason. */
  readonly exited: Promise<Deno.CommandStatus>;
  #child: Deno.ChildProcess;
  #stopping = false;
  #tail: string[];
  #lock: Deno.FsFile;
  /** Where it listens, without credentials. */
  readonly url: string;
  readonly credentials: NatsCredentials;
  readonly pid: number;
  readonly pidFile: string;
  /** The nats-server binary that runs (its resolved path). */
  readonly bin: string;

  private constructor(
    child: Deno.ChildProcess,
    started: {
      url: string;
      credentials: NatsCredentials;
      tail: string[];
      pidFile: string;
      bin: string;
      lock: Deno.FsFile;
    },
  ) {
    this.#child = child;
    this.url = started.url;
    this.credentials = started.credentials;
    this.pid = child.pid;
    this.#tail = started.tail;
    this.pidFile = started.pidFile;
    this.bin = started.bin;
    this.#lock = started.lock;
    this.exited = child.status;
  }

  /** True once stop() was called, so an exit is expected. */
  get stopping(): boolean {
    return this.#stopping;
  }

  /** The last lines the server logged (for error messages when it dies). */
  get lastLines(): string[] {
    return [...this.#tail];
  }

  /** Starts nats-server and waits until it accepts client connections. */
  static async start(options: ManagedNatsOptions): Promise<ManagedNatsServer> {
    const bin = findProgram(options.bin);
    if (!bin) throw natsServerNotFound(options.bin);
    makePrivateDir(options.storeDir);
    makePrivateDir(dirname(options.pidFile));
    const lock = await claimStore(options);
    const configFile = authConfigPath(options.pidFile);
    const credentials = writeAuthConfig(configFile);
    let child: Deno.ChildProcess;
    try {
      child = new Deno.Command(bin, {
        args: [
          "-c",
          configFile,
          "-js",
          "-a",
          "127.0.0.1",
          "-p",
          "-1",
          "-sd",
          options.storeDir,
          "--no_advertise",
        ],
        stdin: "null",
        stdout: "null",
        stderr: "piped",
      }).spawn();
    } catch (err) {
      lock.close();
      if (err instanceof Deno.errors.NotFound) throw natsServerNotFound(options.bin);
      throw new StationError(
        "nats_start_failed",
        `cannot start NATS '${options.bin}': ${errorMessage(err)}`,
        {
          cause: err,
        },
      );
    }
    Deno.writeTextFileSync(
      options.pidFile,
      JSON.stringify({ pid: child.pid, owner_pid: Deno.pid, store_dir: options.storeDir }),
      { mode: PRIVATE_FILE_MODE },
    );

    const tail: string[] = [];
    let resolveReady!: (url: string) => void;
    const ready = new Promise<string>((r) => (resolveReady = r));
    let url: string | undefined;
    // Drain stderr for the whole life of the child: a full pipe would block the server.
    (async () => {
      let buffer = "";
      for await (const chunk of child.stderr.pipeThrough(new TextDecoderStream())) {
        buffer += chunk;
        let nl: number;
        while ((nl = buffer.indexOf("\n")) >= 0) {
          const line = buffer.slice(0, nl);
          buffer = buffer.slice(nl + 1);
          tail.push(line);
          if (tail.length > TAIL_LINES) tail.shift();
          const m = LISTEN_LINE.exec(line);
          if (m) url = `nats://${m[1]}:${m[2]}`;
          if (url && line.includes("Server is ready")) resolveReady(url);
          if (line.includes("[ERR]") || line.includes("[FTL]")) {
            log.warn("nats-server: " + line.replace(/^\[\d+\] \S+ \S+ /, ""));
          }
        }
      }
    })().catch(() => {});

    const timeoutMs = options.startTimeoutMs ?? 15_000;
    const outcome = await within(
      Promise.race([
        ready.then((u) => ({ kind: "ready" as const, url: u })),
        child.status.then((s) => ({ kind: "exited" as const, status: s })),
      ]),
      timeoutMs,
      () => ({ kind: "timeout" as const }),
    );
    if (outcome.kind === "ready") {
      return new ManagedNatsServer(child, {
        url: outcome.url,
        credentials,
        tail,
        pidFile: options.pidFile,
        bin,
        lock,
      });
    }
    if (outcome.kind === "timeout") {
      try {
        child.kill("SIGKILL");
      } catch { /* already gone */ }
      await child.status;
    }
    removeFile(options.pidFile);
    lock.close();
    const why = outcome.kind === "exited"
      ? `exited with code ${outcome.status.code}`
      : `not ready after ${timeoutMs}ms`;
    throw new StationError("nats_start_failed", `nats-server ${why}`, {
      hint: "its last lines: " + (tail.slice(-5).join(" | ") || "(none)"),
      details: { store_dir: options.storeDir, last_lines: tail },
    });
  }

  /** Stops the server: SIGTERM, then SIGKILL after a grace period. */
  async stop(graceMs = 5_000): Promise<void> {
    this.#stopping = true;
    try {
      this.#child.kill("SIGTERM");
    } catch { /* already exited */ }
    const exitedInTime = await within(this.exited.then(() => true), graceMs, () => false);
    if (!exitedInTime) {
      try {
        this.#child.kill("SIGKILL");
      } catch { /* gone */ }
      await this.exited;
    }
    removeFile(this.pidFile);
    // Closing the file releases the lock: the next stn waiting on this store starts now.
    try {
      this.#lock.close();
    } catch { /* stopped twice */ }
  }
}

function removeFile(path: string): void {
  try {
    Deno.removeSync(path);
  } catch { /* not there */ }
}

/**
 * Makes the store dir ours: two nats-servers on one store would corrupt it. An exclusive lock on
 * `<store>/.stn.lock` is held for the life of the server (the kernel drops it when stn dies, even by
 * SIGKILL, so a crash never leaves it stuck), and it queues stns that overlap on one STATION_HOME
 * (cron): each waits up to `busyWaitMs` for the one before to finish, then refuses. Once the lock is
 * ours, a nats-server still recorded in the pid file is an orphan of a killed stn, and is stopped.
 */
async function claimStore(options: ManagedNatsOptions): Promise<Deno.FsFile> {
  // Sync calls: each async one waits for a thread of its own, on the start's serial path.
  const lock = Deno.openSync(join(options.storeDir, ".stn.lock"), {
    create: true,
    write: true,
    mode: PRIVATE_FILE_MODE,
  });
  try {
    const deadline = Date.now() + (options.busyWaitMs ?? 0);
    let announced = false;
    while (!lock.tryLockSync(true)) {
      const owner = readPidFile(options.pidFile)?.owner_pid;
      if (Date.now() >= deadline) {
        throw new StationError(
          "station_home_busy",
          `another stn${owner ? ` (pid ${owner})` : ""} is running its NATS server on ${options.storeDir}`,
          {
            hint: "talk to it instead (stn status shows where), stop it, or use another STATION_HOME",
            exitCode: options.busyExitCode ?? 1,
            details: { owner_pid: owner, store_dir: options.storeDir },
          },
        );
      }
      if (!announced) log.info("waiting for another stn using this STATION_HOME to finish", { pid: owner });
      announced = true;
      // A try is one flock call: asked often, the queued stn starts within 20 ms of the other's exit.
      await sleep(20);
    }
    const recorded = readPidFile(options.pidFile);
    if (recorded && isNatsServer(recorded.pid, options.storeDir)) {
      log.warn("stopping an orphaned nats-server left by a previous stn", { pid: recorded.pid });
      await terminate(recorded.pid);
    }
    removeFile(options.pidFile);
    return lock;
  } catch (err) {
    lock.close();
    throw err;
  }
}

function readPidFile(path: string): { pid: number; owner_pid?: number; store_dir: string } | undefined {
  try {
    return JSON.parse(Deno.readTextFileSync(path));
  } catch {
    return undefined;
  }
}

async function terminate(pid: number): Promise<void> {
  try {
    Deno.kill(pid, "SIGTERM");
  } catch { /* raced */ }
  for (let i = 0; i < 100 && isAlive(pid); i++) await sleep(50);
  if (isAlive(pid)) {
    try {
      Deno.kill(pid, "SIGKILL");
    } catch { /* raced */ }
  }
}

function isNatsServer(pid: number, storeDir: string): boolean {
  try {
    const cmdline = Deno.readTextFileSync(`/proc/${pid}/cmdline`).replaceAll("\0", " ");
    return cmdline.includes("nats-server") && cmdline.includes(storeDir) && isAlive(pid);
  } catch {
    return false;
  }
}
