import { fileURLToPath } from "node:url";
import { readServerFile } from "../../src/config/server_file.ts";
import { sleep, within } from "../../src/lib/async.ts";
import { STN_RUN_ARGS } from "../../src/build/stn_flags.ts";

/** main.ts of this checkout: tests drive the real `stn` through `deno run`, as scripts/stn does. */
export const MAIN = fileURLToPath(new URL("../../main.ts", import.meta.url));

// The parent's discovery variables must not leak into a test's stn.
const SCRUB = ["STATION_URL", "STATION_API_TOKEN", "STATION_HOME", "STATION_CONFIG_DIR"];

/** The environment for a child `stn`: the parent's, minus its server discovery and STN_ settings, plus env. */
export function childEnv(env: Record<string, string>): Record<string, string> {
  const base = Deno.env.toObject();
  for (const k of SCRUB) delete base[k];
  for (const k of Object.keys(base)) if (k.startsWith("STN_")) delete base[k];
  // Tests run many `stn serve` at once: like the API port (--port 0), the MCP ports are any free ones.
  return { ...base, STN_SERVER_MCP_PORT: "0", STN_SERVER_AGENT_PORT: "0", ...env };
}

export interface StnResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RunStnOptions {
  env: Record<string, string>;
  /** The entry script (default MAIN; tests/helpers/stn_http_step.ts adds a test step type). */
  main?: string;
  stdin?: Uint8Array | string;
  cwd?: string;
  /** Kill it after this long (default EXIT_WITHIN_MS); for commands that are slow by nature, like an image build. */
  timeoutMs?: number;
}

/** A command still running after this is killed and its test fails: a hang, not slowness (~100x a normal run). */
const EXIT_WITHIN_MS = 60_000;

/** Runs `stn ARGS…` to completion and returns its exit code and output. */
export async function runStn(args: string[], options: RunStnOptions): Promise<StnResult> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [...STN_RUN_ARGS, options.main ?? MAIN, ...args],
    env: childEnv(options.env),
    clearEnv: true,
    cwd: options.cwd,
    stdin: options.stdin !== undefined ? "piped" : "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (options.stdin !== undefined) {
    const writer = child.stdin.getWriter();
    await writer.write(
      typeof options.stdin === "string" ? new TextEncoder().encode(options.stdin) : options.stdin,
    );
    await writer.close();
  }
  const limit = options.timeoutMs ?? EXIT_WITHIN_MS;
  const out = await within(child.output(), limit, () => {
    child.kill("SIGKILL");
    throw new Error(`stn ${args.join(" ")} did not exit within ${limit / 1000} s (killed)`);
  });
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

/** A long-running `stn` child process, its stderr collected. */
export interface StnProcess {
  child: Deno.ChildProcess;
  /** Everything it printed on stderr so far. */
  stderr(): string;
  /** Sends a signal and waits for the exit status. */
  stop(signal?: Deno.Signal): Promise<Deno.CommandStatus>;
}

/**
 * Starts `stn ARGS…` (through `main`) in the background. With `killAfterMs`, a stop that has not ended
 * the process by then kills it: a hang then fails its test instead of stalling the suite.
 */
export function spawnStn(
  args: string[],
  options: { env: Record<string, string>; main?: string; killAfterMs?: number; umask?: string },
): StnProcess {
  const argv = [Deno.execPath(), ...STN_RUN_ARGS, options.main ?? MAIN, ...args];
  // With a umask, a shell sets it and execs stn in its place (the same pid).
  const [program, ...rest] = options.umask === undefined
    ? argv
    : ["/bin/sh", "-c", `umask ${options.umask} && exec "$@"`, "sh", ...argv];
  const child = new Deno.Command(program, {
    args: rest,
    env: childEnv(options.env),
    clearEnv: true,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  let err = "";
  const reading = (async () => {
    for await (const chunk of child.stderr.pipeThrough(new TextDecoderStream())) err += chunk;
  })();
  return {
    child,
    stderr: () => err,
    stop: async (signal = "SIGTERM") => {
      try {
        child.kill(signal);
      } catch { /* already exited */ }
      const timer = options.killAfterMs === undefined ? undefined : setTimeout(() => {
        try {
          child.kill("SIGKILL");
        } catch { /* gone */ }
      }, options.killAfterMs);
      const s = await child.status;
      clearTimeout(timer);
      await reading;
      return s;
    },
  };
}

/** A `stn` on PATH (in DIR/bin, which it returns) that runs this checkout, as scripts/install puts one there. */
export function stnOnPath(dir: string): string {
  const bin = `${dir}/bin`;
  Deno.mkdirSync(bin, { recursive: true });
  Deno.writeTextFileSync(
    `${bin}/stn`,
    `#!/bin/sh\nexec "${Deno.execPath()}" ${STN_RUN_ARGS.join(" ")} "${MAIN}" "$@"\n`,
    { mode: 0o755 },
  );
  return bin;
}

/** A `stn serve` child process. */
export interface ServeProcess extends StnProcess {
  url: string;
}

/** Starts `stn serve` (port 0 unless args say otherwise) and waits until server.json announces it. */
export async function startServe(
  options: RunStnOptions & { home: string; args?: string[]; timeoutMs?: number; umask?: string },
): Promise<ServeProcess> {
  const proc = spawnStn(["serve", ...(options.args ?? ["--port", "0"])], options);
  const { child } = proc;
  let exited = false;
  child.status.then(() => (exited = true));
  const deadline = Date.now() + (options.timeoutMs ?? 20_000);
  const serverJson = `${options.home}/run/server.json`;
  for (;;) {
    const info = readServerFile(serverJson);
    if (info?.pid === child.pid) return { ...proc, url: info.url };
    if (exited || Date.now() > deadline) {
      await proc.stop("SIGKILL");
      throw new Error(`stn serve did not come up${exited ? " (it exited)" : ""}:\n${proc.stderr()}`);
    }
    await sleep(50);
  }
}

/** True while the process exists and is not a zombie. */
export { isAlive as processAlive } from "../../src/lib/process_alive.ts";

/** Polls until cond() is true or the timeout passes; returns whether it became true. */
export async function waitFor(cond: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await cond()) return true;
    await sleep(50);
  }
  return await cond();
}
