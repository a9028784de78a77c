import { join } from "node:path";
import { type EmbeddedAssets, embeddedAssets } from "../build/embedded.ts";
import { StationError } from "../errors.ts";
import { hex } from "../lib/hex.ts";
import { findProgram, type FindProgramOptions, programSearchDirs } from "../lib/programs.ts";
import { writeFileAtomic } from "../lib/write_atomic.ts";
import { log } from "../log.ts";

/** nats.server_bin's default: a name looked up on PATH and the usual places. */
export const DEFAULT_NATS_BIN = "nats-server";

/** Where the nats-server managed mode runs comes from. */
export type NatsServerSource = "configured" | "path" | "embedded";

/** A nats-server managed mode would run: its path, where it came from, its version when known without running it. */
export interface NatsServerChoice {
  path: string;
  source: NatsServerSource;
  /** The embedded one's version, from the build manifest. */
  version?: string;
}

/** How a source is shown to users (doctor, version). */
export const SOURCE_LABEL: Record<NatsServerSource, string> = {
  configured: "configured in nats.server_bin",
  path: "found on PATH or in the usual places",
  embedded: "embedded in this stn binary",
};

export interface LocateOptions extends FindProgramOptions {
  /** Where an embedded nats-server is extracted ($STATION_HOME/bin). */
  binDir: string;
  /** The embedded files to fall back on (default: this binary's; none when stn runs from a checkout). */
  assets?: EmbeddedAssets;
}

/** The extracted copy's path in binDir (named nats-server, as the orphan check in server.ts expects). */
export function extractedPath(binDir: string): string {
  return join(binDir, "nats-server");
}

/**
 * Which nats-server managed mode uses, without extracting anything: a configured name or path, else
 * `nats-server` on PATH and the usual places, else the one embedded in a compiled stn. Undefined when
 * there is none; a configured one that is missing is not replaced by the embedded one.
 */
export function chooseNatsServer(bin: string, options: LocateOptions): NatsServerChoice | undefined {
  const found = findProgram(bin, options);
  if (found) return { path: found, source: bin === DEFAULT_NATS_BIN ? "path" : "configured" };
  const embedded = bin === DEFAULT_NATS_BIN
    ? (options.assets ?? embeddedAssets())?.manifest.nats_server
    : null;
  if (!embedded) return undefined;
  return { path: extractedPath(options.binDir), source: "embedded", version: embedded.version };
}

/** The nats-server to run, with an embedded one extracted and verified first; throws nats_server_not_found. */
export async function locateNatsServer(bin: string, options: LocateOptions): Promise<NatsServerChoice> {
  const choice = chooseNatsServer(bin, options);
  if (!choice) throw natsServerNotFound(bin, options);
  if (choice.source === "embedded") {
    await extractNatsServer(options.assets ?? embeddedAssets()!, options.binDir);
  }
  return choice;
}

/** The error for a nats-server that is neither configured, found nor embedded. */
export function natsServerNotFound(bin: string, options: FindProgramOptions = {}): StationError {
  const where = bin.includes("/") ? "" : ` (searched ${programSearchDirs(options).join(", ")})`;
  return new StationError("nats_server_not_found", `cannot start NATS: '${bin}' was not found${where}`, {
    hint: "install it (Debian/Ubuntu: apt-get install nats-server; macOS: brew install nats-server), " +
      "set nats.server_bin to its path, or connect to a running server with --nats-url",
  });
}

/** What `<nats-server> --version` says (`2.9.10`); undefined when it does not run or says nothing like it. */
export async function natsServerVersion(path: string): Promise<string | undefined> {
  try {
    const out = await new Deno.Command(path, { args: ["--version"], stdout: "piped", stderr: "null" })
      .output();
    return /v?(\d+\.\d+\.\d+)/.exec(new TextDecoder().decode(out.stdout))?.[1];
  } catch {
    return undefined;
  }
}

async function sha256Of(bytes: Uint8Array): Promise<string> {
  return hex(await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>));
}

async function readIfPresent(path: string): Promise<Uint8Array | undefined> {
  try {
    return await Deno.readFile(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return undefined;
    throw err;
  }
}

/**
 * Makes `binDir/nats-server` the embedded nats-server: kept when its SHA-256 is the manifest's, else
 * (missing, corrupted, an older stn's) written again from the embedded bytes, which are checked first.
 * The copy is replaced by a rename, so a nats-server another stn runs from it keeps running.
 */
export async function extractNatsServer(assets: EmbeddedAssets, binDir: string): Promise<string> {
  const expected = assets.manifest.nats_server;
  if (!expected) throw new Error("this stn binary embeds no nats-server");
  const target = extractedPath(binDir);
  const present = await readIfPresent(target);
  if (present && await sha256Of(present) === expected.sha256) {
    if (!((await Deno.stat(target)).mode! & 0o100)) await Deno.chmod(target, 0o755);
    return target;
  }
  if (present) {
    log.warn("the extracted nats-server does not match the embedded one: extracting it again", {
      path: target,
    });
  }
  const bytes = await Deno.readFile(join(assets.dir, expected.file));
  const digest = await sha256Of(bytes);
  if (digest !== expected.sha256) {
    throw new StationError(
      "embedded_nats_server_corrupt",
      "the nats-server embedded in this stn is damaged",
      {
        hint:
          "download stn again and check it against its SHA256SUMS (docs/install.md), or install nats-server",
        details: { expected: expected.sha256, actual: digest },
      },
    );
  }
  await Deno.mkdir(binDir, { recursive: true });
  await writeFileAtomic(target, bytes, { mode: 0o755 });
  log.info("extracted the embedded nats-server", { path: target, version: expected.version });
  return target;
}
