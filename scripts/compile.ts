/**
 * `deno task compile`: builds the one-file `stn` — main.ts's module graph, the files stn reads at run time
 * that no import reaches, and a nats-server with a manifest recording it — then checks from deno compile's
 * listing that every runtime file is in the binary (a file missing fails the build, not a user's run).
 *
 *   deno task compile [-o stn] [--target TRIPLE] [--nats-server PATH [--nats-version V]] [--no-nats-server]
 *
 * The nats-server is --nats-server, else $NATS_SERVER_BIN, else (building for this machine) the installed
 * one. Where Deno's runtime base cannot be downloaded, DENORT_BIN=<any file> still resolves and embeds
 * the whole graph: the output is then not runnable, but the check holds (tests/build/compile_test.ts).
 */
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { type BuildManifest, EMBED_DIR, MANIFEST_FILE } from "../src/build/embedded.ts";
import { gitHead } from "../src/build/info.ts";
import { hex } from "../src/lib/hex.ts";
import { findProgram } from "../src/lib/programs.ts";
import { sourceFiles } from "./layout.ts";
import { VERSION } from "../src/version.ts";
import { STN_V8_FLAGS } from "../src/build/stn_flags.ts";
import { errorMessage } from "../src/errors.ts";

export const ROOT = fileURLToPath(new URL("..", import.meta.url));

/** The targets stn is released for (Deno's triples); stn runs on Linux and macOS only. */
export const TARGETS = {
  "x86_64-unknown-linux-gnu": { os: "linux", arch: "x86_64" },
  "aarch64-unknown-linux-gnu": { os: "linux", arch: "aarch64" },
  "x86_64-apple-darwin": { os: "darwin", arch: "x86_64" },
  "aarch64-apple-darwin": { os: "darwin", arch: "aarch64" },
} as const;
export type Target = keyof typeof TARGETS;

/**
 * The modules main.ts and src/ import through `lazyImport` (src/lib/lazy_import.ts), relative to the
 * checkout: deno compile cannot see a URL built at run time, so each is given with --include.
 */
export function lazyModules(): string[] {
  const files = [join(ROOT, "main.ts"), ...sourceFiles().map((f) => join(ROOT, "src", f))];
  return [
    ...new Set(
      files.flatMap((file) =>
        [...Deno.readTextFileSync(file).matchAll(/lazyImport<typeof import\("(\.[^"]+)"\)>/g)]
          .map((m) => relative(ROOT, join(file, "..", m[1])))
      ),
    ),
  ].sort();
}

/** What deno compile is given with --include: runtime files and modules no static import reaches. */
export const INCLUDES = [
  "src/db/checkpoint_worker.ts", // `new Worker(new URL(...))` in src/db/checkpoint.ts
  EMBED_DIR, // the nats-server and the build manifest (src/build/embedded.ts)
  ...lazyModules(),
];

/** Where deno compile's listing puts npm packages. */
const NPM_DIR = ".deno_compile_node_modules/localhost";

function filesIn(dir: string): string[] {
  return [...Deno.readDirSync(join(ROOT, dir))].filter((e) => e.isFile).map((e) => `${dir}/${e.name}`).sort();
}

/**
 * Every file a compiled stn reads at run time, relative to the checkout: reached through imports (the
 * dashboard's assets, migrations, the sandbox supervisor's bytes, the MCP docs resource) or --include.
 */
export function runtimeFiles(manifest: BuildManifest): string[] {
  const htmx = JSON.parse(Deno.readTextFileSync(join(ROOT, "deno.json"))).imports["htmx.org"].split("@")
    .pop();
  return [
    "src/db/checkpoint_worker.ts",
    ...lazyModules(),
    ...filesIn("src/ui/assets"),
    `${NPM_DIR}/htmx.org/${htmx}/dist/htmx.min.js`,
    ...filesIn("src/db/migrations"),
    "src/sandbox/channel/supervisor_binary.ts",
    "docs/workflows.md", // the MCP resource station://docs/workflow-dsl, imported as text
    `${EMBED_DIR}/${MANIFEST_FILE}`,
    ...(manifest.nats_server ? [`${EMBED_DIR}/${manifest.nats_server.file}`] : []),
  ];
}

/**
 * The paths in deno compile's "Embedded Files" tree. A directory shown as `dir/*` holds every file of
 * that directory on disk (a directory with a file left out is expanded), so such entries end in `/*`.
 */
export function embeddedPaths(listing: string): string[] {
  // A line is `│ ├── name (size)` or `├─┬ dir (size)`, two columns a level (uncoloured: NO_COLOR).
  const lines = listing.split("\n");
  const start = lines.findIndex((l) => l.trim() === "Embedded Files");
  const stack: string[] = [];
  const paths: string[] = [];
  for (const line of lines.slice(start + 1)) {
    const m = /^([│ ]*)[├└]─([─┬]) (.+?)(?: \([^()]*\))?$/.exec(line);
    if (!m) continue;
    const depth = m[1].length / 2;
    stack.length = depth;
    const path = [...stack, m[3]].join("/");
    if (m[2] === "┬") stack.push(m[3]);
    else paths.push(path);
  }
  return paths;
}

/** The wanted files that are not in the listing's paths (directly or under a `dir/*`). */
export function missingFiles(paths: string[], wanted: string[]): string[] {
  const files = new Set(paths);
  const dirs = paths.filter((p) => p.endsWith("/*")).map((p) => p.slice(0, -1));
  return wanted.filter((f) => !files.has(f) && !dirs.some((d) => f.startsWith(d)));
}

/** The machine a binary runs on, from its ELF or Mach-O header; undefined for anything else. */
export function binaryPlatform(head: Uint8Array): { os: string; arch: string } | undefined {
  const view = new DataView(head.buffer, head.byteOffset, head.byteLength);
  if (head.length >= 20 && view.getUint32(0) === 0x7f454c46) {
    const machine = view.getUint16(18, head[5] === 1);
    const arch = ({ 0x3e: "x86_64", 0xb7: "aarch64" } as Record<number, string>)[machine];
    return arch ? { os: "linux", arch } : undefined;
  }
  if (head.length >= 8 && view.getUint32(0, true) === 0xfeedfacf) {
    const cpu = view.getUint32(4, true);
    const arch = ({ 0x01000007: "x86_64", 0x0100000c: "aarch64" } as Record<number, string>)[cpu];
    return arch ? { os: "darwin", arch } : undefined;
  }
  return undefined;
}

/** Why the build stops: said on stderr, exit 1 (bad arguments exit 2). */
export class BuildError extends Error {
  constructor(message: string, readonly exitCode = 1) {
    super(message);
  }
}

export interface CompileOptions {
  output: string;
  target: Target;
  /** The nats-server to embed; null builds without one. */
  natsServer: string | null;
  /** Its version, when it cannot run on this machine to say it. */
  natsVersion?: string;
  /** DENORT_BIN for deno compile: a path, null to download the base, undefined to inherit the environment's. */
  denort?: string | null;
  /** Copy deno compile's output (the listing of embedded files) to stderr (default true). */
  echo?: boolean;
}

async function natsVersionOf(path: string, target: Target, given?: string): Promise<string> {
  if (given) return given.replace(/^v/, "");
  if (target !== Deno.build.target) {
    throw new BuildError(
      `a nats-server for ${target} cannot run here to tell its version: give --nats-version`,
      2,
    );
  }
  const out = await new Deno.Command(path, { args: ["--version"], stdout: "piped", stderr: "piped" })
    .output();
  const m = /v?(\d+\.\d+\.\d+\S*)/.exec(new TextDecoder().decode(out.stdout));
  if (!out.success || !m) throw new BuildError(`${path} --version did not print a version`);
  return m[1];
}

function readBinary(path: string): Uint8Array<ArrayBuffer> {
  try {
    return Deno.readFileSync(path);
  } catch (err) {
    throw new BuildError(`cannot read the nats-server to embed: ${errorMessage(err)}`, 2);
  }
}

/**
 * Lays out `embedDir` as a compiled stn holds it (its EMBED_DIR): the nats-server and the manifest.
 * Tests stage a directory the same way to run the embedded-file lookup without a runnable binary.
 */
export async function stage(
  options: Omit<CompileOptions, "output">,
  embedDir: string,
): Promise<BuildManifest> {
  // What an earlier build staged must not ride along in this one.
  try {
    Deno.removeSync(embedDir, { recursive: true });
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  Deno.mkdirSync(embedDir, { recursive: true });
  let nats: BuildManifest["nats_server"] = null;
  if (options.natsServer) {
    const bytes = readBinary(options.natsServer);
    const platform = binaryPlatform(bytes.subarray(0, 64));
    const want = TARGETS[options.target];
    if (platform?.os !== want.os || platform.arch !== want.arch) {
      const found = platform ? `${platform.os} ${platform.arch}` : "no known platform";
      throw new BuildError(
        `${options.natsServer} is a nats-server for ${found}, not for ${options.target}: ` +
          `give --nats-server with one built for ${want.os} ${want.arch}`,
      );
    }
    Deno.writeFileSync(join(embedDir, "nats-server"), bytes, { mode: 0o755 });
    nats = {
      file: "nats-server",
      version: await natsVersionOf(options.natsServer, options.target, options.natsVersion),
      sha256: hex(await crypto.subtle.digest("SHA-256", bytes)),
      size: bytes.length,
    };
  }
  const head = await gitHead(ROOT);
  const manifest: BuildManifest = {
    stn_version: VERSION,
    commit: head.commit,
    built_at: new Date().toISOString(),
    deno: Deno.version.deno,
    target: options.target,
    nats_server: nats,
  };
  Deno.writeTextFileSync(join(embedDir, MANIFEST_FILE), JSON.stringify(manifest, null, 2) + "\n");
  return manifest;
}

/** The deno compile command line for a build. */
export function compileArgs(options: CompileOptions): string[] {
  return [
    "compile",
    "-A",
    `--v8-flags=${STN_V8_FLAGS}`,
    ...INCLUDES.flatMap((f) => ["--include", f]),
    "--target",
    options.target,
    "-o",
    options.output,
    "main.ts",
  ];
}

/** deno compile's error and its first causes on one line (the base's download, a bad base binary). */
function compileFailure(output: string): string {
  const lines = output.split("\n");
  const error = lines.find((l) => l.startsWith("error: "))?.slice(7) ?? "see its output above";
  const causes = lines.filter((l) => /^\s+\d+: /.test(l)).slice(0, 2).map((l) => l.replace(/^\s+\d+: /, ""));
  return [error, ...causes].join(": ");
}

/** Stages, compiles and checks one binary; returns its manifest. Builds in one checkout run one at a time. */
export async function compileStn(options: CompileOptions): Promise<BuildManifest> {
  Deno.mkdirSync(join(ROOT, ".build"), { recursive: true });
  const lock = await Deno.open(join(ROOT, ".build", "compile.lock"), { create: true, write: true });
  await lock.lock(true);
  try {
    const manifest = await stage(options, join(ROOT, EMBED_DIR));
    const env: Record<string, string> = { ...Deno.env.toObject(), NO_COLOR: "1" };
    if (options.denort === null) delete env.DENORT_BIN;
    else if (options.denort) env.DENORT_BIN = options.denort;
    const out = await new Deno.Command(Deno.execPath(), {
      args: compileArgs(options),
      cwd: ROOT,
      env,
      clearEnv: true,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const listing = new TextDecoder().decode(out.stderr);
    if (options.echo ?? true) await Deno.stderr.write(out.stderr);
    if (!out.success) {
      throw new BuildError(`deno compile failed for ${options.target}: ${compileFailure(listing)}`);
    }
    const missing = missingFiles(embeddedPaths(listing), runtimeFiles(manifest));
    if (missing.length) {
      Deno.removeSync(options.output);
      throw new BuildError(
        `the binary lacks files stn reads at run time: ${missing.join(", ")} — add them to INCLUDES in ` +
          relative(Deno.cwd(), fileURLToPath(import.meta.url)),
      );
    }
    return manifest;
  } finally {
    lock.close();
  }
}

/** This machine's nats-server, when building for this machine (another target cannot run it). */
export function installedNatsServer(target: Target): string | undefined {
  return target === Deno.build.target ? findProgram("nats-server") : undefined;
}

function isTarget(t: string): t is Target {
  return t in TARGETS;
}

/** Reads the command line into compile options. */
export function parseOptions(args: string[], env = Deno.env.toObject()): CompileOptions {
  const { values } = parseArgs({
    args,
    options: {
      output: { type: "string", short: "o", default: "stn" },
      target: { type: "string", default: Deno.build.target },
      "nats-server": { type: "string" },
      "nats-version": { type: "string" },
      "no-nats-server": { type: "boolean", default: false },
    },
  });
  const target = values.target;
  if (!isTarget(target)) {
    throw new BuildError(`unknown target '${target}': one of ${Object.keys(TARGETS).join(", ")}`, 2);
  }
  let natsServer: string | null = null;
  if (!values["no-nats-server"]) {
    natsServer = values["nats-server"] ?? env.NATS_SERVER_BIN ?? installedNatsServer(target) ?? null;
    if (!natsServer) {
      throw new BuildError(
        `no nats-server to embed for ${target}: give --nats-server PATH (or NATS_SERVER_BIN), ` +
          "or --no-nats-server for a binary that needs one installed",
        2,
      );
    }
  }
  return { output: values.output, target, natsServer, natsVersion: values["nats-version"] };
}

if (import.meta.main) {
  try {
    const options = parseOptions(Deno.args);
    const manifest = await compileStn(options);
    const nats = manifest.nats_server;
    console.log(
      `built ${options.output} for ${options.target}` +
        (nats ? ` with nats-server ${nats.version} (sha256 ${nats.sha256})` : " without a nats-server"),
    );
  } catch (err) {
    if (!(err instanceof BuildError || err instanceof TypeError)) throw err;
    console.error(`compile: ${err.message}`);
    Deno.exit(err instanceof BuildError ? err.exitCode : 2);
  }
}
