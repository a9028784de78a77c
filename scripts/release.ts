/**
 * scripts/release: builds `stn` for every released target with scripts/compile.ts, each with a nats-server
 * for its machine, into dist/ with SHA256SUMS (docs/install.md says how users check them).
 *
 *   scripts/release [--target T]... [--nats-server T=PATH]... [--nats-version T=V]... [--denort T=PATH]...
 *                   [--out DIR] [--check]
 *
 * A target needs Deno's runtime base for it (downloaded by deno compile, or --denort T=PATH) and a
 * nats-server built for it (--nats-server T=PATH; for this machine's target, the installed one). A target
 * that cannot be built is said so, the others are still built, and the exit code is 1.
 *
 * --check builds nothing to ship: it compiles each target against a stand-in base (this deno, as
 * DENORT_BIN) into a temporary directory, which proves the module graph and every runtime file embed for
 * that target, then deletes the outputs. Targets without a nats-server are checked without one. A stand-in
 * base can only be an executable of the target's format: here (Linux) the macOS targets cannot be checked.
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import { BuildError, compileStn, installedNatsServer, ROOT, type Target, TARGETS } from "./compile.ts";
import { hex } from "../src/lib/hex.ts";
import { VERSION } from "../src/version.ts";

/** `T=VALUE` arguments as a map, refusing unknown targets. */
function perTarget(values: string[] | undefined, flag: string): Map<Target, string> {
  const out = new Map<Target, string>();
  for (const v of values ?? []) {
    const at = v.indexOf("=");
    const target = v.slice(0, at);
    if (at < 0 || !(target in TARGETS)) throw new BuildError(`--${flag} takes TARGET=VALUE, not '${v}'`, 2);
    out.set(target as Target, v.slice(at + 1));
  }
  return out;
}

/** A built file's SHA256SUMS line (the format `sha256sum -c` reads). */
async function sumLine(path: string, name: string): Promise<string> {
  return `${hex(await crypto.subtle.digest("SHA-256", await Deno.readFile(path)))}  ${name}\n`;
}

async function main(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      target: { type: "string", multiple: true },
      "nats-server": { type: "string", multiple: true },
      "nats-version": { type: "string", multiple: true },
      denort: { type: "string", multiple: true },
      out: { type: "string", default: join(ROOT, "dist") },
      check: { type: "boolean", default: false },
    },
  });
  const targets = (values.target ?? Object.keys(TARGETS)) as Target[];
  for (const t of targets) if (!(t in TARGETS)) throw new BuildError(`unknown target '${t}'`, 2);
  const nats = perTarget(values["nats-server"], "nats-server");
  const natsVersions = perTarget(values["nats-version"], "nats-version");
  const denorts = perTarget(values.denort, "denort");
  const check = values.check;
  const out = check ? await Deno.makeTempDir({ prefix: "stn-release-check-" }) : values.out;
  Deno.mkdirSync(out, { recursive: true });

  const built: string[] = [];
  const failed: string[] = [];
  try {
    for (const target of targets) {
      const name = `stn-${VERSION}-${target}`;
      try {
        const manifest = await compileStn({
          output: join(out, name),
          target,
          natsServer: nats.get(target) ?? natsFor(target, check),
          natsVersion: natsVersions.get(target),
          denort: check ? Deno.execPath() : denorts.get(target) ?? null,
          echo: false,
        });
        const embedded = manifest.nats_server
          ? `nats-server ${manifest.nats_server.version}`
          : "no nats-server (none given for it)";
        console.error(`release: ${target}: ${check ? "compiles" : `built ${name}`}, with ${embedded}`);
        built.push(name);
      } catch (err) {
        if (!(err instanceof BuildError)) throw err;
        const hint = /dl\.deno\.land|base binary/.test(err.message)
          ? " — Deno's runtime base for it cannot be downloaded here: give --denort " +
            `${target}=PATH, or use --check`
          : /Linkedit|not a valid/.test(err.message)
          ? " — a stand-in base must be an executable of the target's format, which this machine lacks"
          : "";
        console.error(`release: ${target}: cannot build: ${err.message}${hint}`);
        failed.push(target);
      }
    }
    if (!check && built.length) {
      let sums = "";
      for (const name of built) sums += await sumLine(join(out, name), name);
      Deno.writeTextFileSync(join(out, "SHA256SUMS"), sums);
      console.error(`release: wrote ${join(out, "SHA256SUMS")} (${built.length} binaries)`);
    }
  } finally {
    if (check) Deno.removeSync(out, { recursive: true });
  }
  if (failed.length) console.error(`release: not built: ${failed.join(", ")}`);
  return failed.length ? 1 : 0;
}

/**
 * The nats-server a target gets when none is given: this machine's installed one for its own target; for
 * another target, none in a check, else the build of that target stops here.
 */
function natsFor(target: Target, check: boolean): string | null {
  const installed = target === Deno.build.target
    ? Deno.env.get("NATS_SERVER_BIN") ?? installedNatsServer(target)
    : undefined;
  if (installed) return installed;
  if (check && target !== Deno.build.target) return null;
  const { os, arch } = TARGETS[target];
  throw new BuildError(
    `no nats-server for ${target}: give --nats-server ${target}=PATH (a build for ${os} ${arch} from ` +
      `https://github.com/nats-io/nats-server/releases) and --nats-version ${target}=V`,
  );
}

if (import.meta.main) {
  try {
    Deno.exit(await main(Deno.args));
  } catch (err) {
    if (!(err instanceof BuildError || err instanceof TypeError)) throw err;
    console.error(`release: ${err.message}`);
    Deno.exit(err instanceof BuildError ? err.exitCode : 2);
  }
}
