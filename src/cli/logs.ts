/** `stn logs`: the log of this home's station — `stn serve`'s log file, or the `stn up` container's log. */

import { lazyImport } from "../lib/lazy_import.ts";
import type { Command } from "./command.ts";
import process from "node:process";
import type { Readable } from "node:stream";
import type { StationPaths } from "../config/paths.ts";
import { StationError, usageError } from "../errors.ts";
import { parseDuration } from "../lib/duration.ts";
import { followLogFile, logFilePath, readLogLines } from "../lib/log_file.ts";
import { readServerFile } from "../config/server_file.ts";
import { commandConfig, jsonMode } from "./context.ts";
import { render } from "./output.ts";

/** `--since`: a duration back from now (10m, 2h) or an ISO 8601 time, as ms since the epoch. */
function sinceFlag(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const back = parseDuration(raw);
  if (back !== null) return Date.now() - back;
  const at = Date.parse(raw);
  if (!Number.isNaN(at)) return at;
  throw usageError(
    "invalid_duration",
    `--since ${raw} is neither a duration nor a time`,
    'e.g. "10m", "2h" or 2026-11-26T09:00:00Z',
  );
}

/**
 * Which log a plain `stn logs` means: `--name`'s container; else what server.json announces (a `stn up`
 * container, or a `stn serve`, whose log is the file); else the last `stn up` of this home, else a
 * `stn serve` log file that exists; else the current folder's container (the `stn up` default name).
 */
function logSource(paths: StationPaths, name: string | undefined): "file" | "container" {
  if (name) return "container";
  const announced = readServerFile(paths.serverJson);
  if (announced) return announced.container ? "container" : "file";
  try {
    Deno.statSync(logFilePath(paths.logsDir));
    return "file";
  } catch {
    return "container";
  }
}

/** Adds `stn logs` to the program. */
export function logsCommand(program: Command): void {
  program.command("logs")
    .description(
      "print this station's log: `stn serve`'s ($STATION_HOME/logs/stn.log) or the `stn up` container's; " +
        "with --json as {source, lines: [{stream, text}]}",
    )
    .option("--name <name>", "a `stn up` station's name (default: this home's station)")
    .option("-F, --follow", "keep printing new lines until Ctrl-C")
    .option("--tail <n>", "only the last N lines", "100")
    .option("--since <time>", "only lines from this long ago (10m, 2h) or since this time (ISO 8601)")
    .action(async (opts: { name?: string; follow?: boolean; tail: string; since?: string }, cmd: Command) => {
      const config = await commandConfig(cmd);
      if (!/^\d+$/.test(opts.tail)) {
        throw usageError("invalid_limit", `--tail ${opts.tail} is not a number`, "e.g. --tail 50");
      }
      const json = jsonMode(cmd);
      if (opts.follow && json) {
        throw usageError("json_with_stdout", "--json cannot be used with --follow", "use --json without -F");
      }
      const tail = Number(opts.tail);
      const since = sinceFlag(opts.since);
      if (logSource(config.paths, opts.name) === "file") {
        const lines = readLogLines(config.paths.logsDir, { tail, since });
        if (json) {
          const source = logFilePath(config.paths.logsDir);
          return render({ source, lines: lines.map((text) => ({ stream: "stderr", text })) }, { json });
        }
        for (const line of lines) console.log(line);
        if (!opts.follow) return;
        const stop = new AbortController();
        Deno.addSignalListener("SIGINT", () => stop.abort());
        await followLogFile(
          config.paths.logsDir,
          (text) => Deno.stdout.writeSync(new TextEncoder().encode(text)),
          stop.signal,
        );
        return;
      }
      await containerLogs(config.paths, opts.name, { tail, since, follow: opts.follow, json });
    });
}

/** Prints a `stn up` container's log (the Docker side loads only here). */
async function containerLogs(
  paths: StationPaths,
  name: string | undefined,
  opts: { tail: number; since?: number; follow?: boolean; json: boolean },
): Promise<void> {
  const [docker, lookup] = await Promise.all([
    lazyImport<typeof import("../deploy/docker.ts")>("../deploy/docker.ts", import.meta.url),
    lazyImport<typeof import("../deploy/lookup.ts")>("../deploy/lookup.ts", import.meta.url),
  ]);
  const names = lookup.targetNames(paths, name);
  const engine = await docker.connectEngine();
  if (!await docker.inspectContainer(engine.docker, names.container)) {
    throw new StationError("station_not_running", `there is no container ${names.container}`, {
      hint:
        "start it with stn up (or name another with --name); `stn serve` writes $STATION_HOME/logs/stn.log",
    });
  }
  const container = engine.docker.getContainer(names.container);
  const since = opts.since === undefined ? {} : { since: Math.floor(opts.since / 1000) };
  if (opts.follow) {
    const stream = await container.logs({
      stdout: true,
      stderr: true,
      tail: opts.tail,
      follow: true,
      ...since,
    });
    engine.docker.modem.demuxStream(stream, process.stdout, process.stderr);
    await new Promise<void>((resolve) => (stream as Readable).on("end", resolve).on("close", resolve));
    return;
  }
  const buf = await container.logs({
    stdout: true,
    stderr: true,
    tail: opts.tail,
    follow: false,
    ...since,
  }) as unknown as Uint8Array;
  if (!opts.json) return await writeFrames(docker.logFrames(buf));
  const dec = new TextDecoder();
  const lines = [...docker.logFrames(buf)].map((f) => ({
    stream: f.stream === 2 ? "stderr" : "stdout",
    text: dec.decode(f.data).replace(/\n$/, ""),
  }));
  render({ source: names.container, container: names.container, lines }, { json: true });
}

/** Writes Docker's log frames (demultiplexed) to stdout and stderr, each to its own stream. */
async function writeFrames(frames: Iterable<{ stream: number; data: Uint8Array }>): Promise<void> {
  for (const frame of frames) {
    const out = frame.stream === 2 ? Deno.stderr : Deno.stdout;
    for (let n = 0; n < frame.data.length;) n += await out.write(frame.data.subarray(n));
  }
}
