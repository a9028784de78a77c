/** The station image `stn up` runs, built locally from this checkout (Deno, the source, nats-server). */

import type Docker from "dockerode";
import { Buffer } from "node:buffer";
import { createReadStream } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import type { Readable } from "node:stream";
import tar from "tar-stream";
import { errorMessage, StationError } from "../errors.ts";
import { findProgram } from "../lib/programs.ts";
import { VERSION } from "../version.ts";
import { STN_RUN_ARGS } from "../build/stn_flags.ts";
import { DATA_DIR, IMAGE_LABEL, STATION_UID } from "./names.ts";
import { hex } from "../lib/hex.ts";

/** Bumped when the image's layout changes, so an image built by an older builder is not reused. */
const BUILDER = "stn-image-1";
const REPO = "stn";
const SOURCE_ROOT = fileURLToPath(new URL("../../", import.meta.url));
const ROOTFS_SCRIPT = join(SOURCE_ROOT, "scripts", "lib", "debian_rootfs.sh");

/** What goes into the image besides the Debian root: the checkout, this Deno, nats-server, the npm cache. */
interface Inputs {
  sources: string[];
  natsServer: string;
  natsVersion: string;
  npmCache: string;
  packages: string[];
}

function buildFailed(message: string, hint: string, cause?: unknown): StationError {
  return new StationError("image_build_failed", message, { hint, cause });
}

async function output(cmd: string, args: string[]): Promise<string> {
  const out = await new Deno.Command(cmd, { args, stdout: "piped", stderr: "inherit" }).output();
  if (!out.success) throw new Error(`${cmd} ${args.join(" ")} exited with ${out.code}`);
  return new TextDecoder().decode(out.stdout).trim();
}

function walk(dir: string): string[] {
  return [...Deno.readDirSync(dir)].flatMap((e) => {
    const path = join(dir, e.name);
    return e.isDirectory ? walk(path) : e.isFile ? [path] : [];
  });
}

/** The npm package names deno.lock pins (`@scope/name@1.2.3_peer@4` → `@scope/name`). */
export function lockedPackages(lock: { npm?: Record<string, unknown> }): string[] {
  const names = Object.keys(lock.npm ?? {}).map((key) => key.slice(0, key.indexOf("@", 1)));
  return [...new Set(names)].sort();
}

async function gatherInputs(): Promise<Inputs> {
  const required = ["main.ts", "deno.json", "deno.lock", "src"];
  if (!required.every((f) => exists(join(SOURCE_ROOT, f)))) {
    throw buildFailed(
      "stn image build needs stn's source checkout, and this stn has none next to it",
      "run it from a checkout (scripts/stn image build)",
    );
  }
  const natsServer = findProgram("nats-server");
  if (!natsServer) {
    throw buildFailed("nats-server is not installed, so it cannot go into the image", "run scripts/setup");
  }
  const lock = JSON.parse(Deno.readTextFileSync(join(SOURCE_ROOT, "deno.lock")));
  const info = JSON.parse(await output(Deno.execPath(), ["info", "--json"]));
  const npmCache = join(info.npmCache, "registry.npmjs.org");
  const packages = lockedPackages(lock);
  const missing = packages.filter((p) => !exists(join(npmCache, p)));
  if (missing.length) {
    throw buildFailed(
      `the Deno cache lacks npm packages stn needs: ${missing.slice(0, 5).join(", ")}`,
      "run `deno install` in the checkout (or scripts/setup), then build again",
    );
  }
  const sources = [
    "main.ts",
    "deno.json",
    "deno.lock",
    "docs/workflows.md", // the MCP resource station://docs/workflow-dsl imports it as text
    ...walk(join(SOURCE_ROOT, "src"))
      .map((p) => relative(SOURCE_ROOT, p)),
  ].sort();
  const natsVersion = await output(natsServer, ["--version"]);
  return { sources, natsServer, natsVersion, npmCache, packages };
}

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

/** sha256 of what the image holds: the builder, Deno, nats-server, the root script and every source file. */
async function contentHash(inputs: Inputs): Promise<string> {
  const parts = [
    BUILDER,
    VERSION,
    Deno.version.deno,
    inputs.natsVersion,
    Deno.readTextFileSync(ROOTFS_SCRIPT),
  ];
  for (const file of inputs.sources) parts.push(file, Deno.readTextFileSync(join(SOURCE_ROOT, file)));
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(parts.join("\0")));
  return hex(digest);
}

/** The station image for this checkout: its tag (`stn:<version>-<hash>`) and whether Docker has it. */
export interface StationImage {
  tag: string;
  hash: string;
  present: boolean;
}

/** Works out the image this stn would build, and whether it is already built. */
export async function stationImage(docker: Docker): Promise<StationImage & { inputs: Inputs }> {
  const inputs = await gatherInputs();
  const hash = await contentHash(inputs);
  const tag = `${REPO}:${VERSION}-${hash.slice(0, 12)}`;
  const present = await docker.getImage(tag).inspect().then(() => true, () => false);
  return { tag, hash, present, inputs };
}

const ENTRY = `#!/bin/sh
# stn up's entry: the workspace's environments/ (mounted read-only at /workspace) are the station's own.
if [ -d /workspace/environments ] && { [ -L "$STATION_HOME/environments" ] || [ ! -e "$STATION_HOME/environments" ]; }; then
  ln -sfn /workspace/environments "$STATION_HOME/environments"
fi
exec stn "$@"
`;

const STN = `#!/bin/sh
# stn from its source in /opt/stn, offline: every dependency is already in $DENO_DIR.
exec deno ${STN_RUN_ARGS.join(" ")} --cached-only /opt/stn/main.ts "$@"
`;

type Header = Parameters<tar.Pack["entry"]>[0];

/** Adds one entry (a directory, a text or a host file) to the image's tar stream, waiting until written. */
function add(pack: tar.Pack, header: Header, body?: string | { file: string; size: number }): Promise<void> {
  return new Promise((resolve, reject) => {
    if (body === undefined || typeof body === "string") {
      pack.entry(header, body ?? "", (err) => (err ? reject(err) : resolve()));
      return;
    }
    const entry = pack.entry({ ...header, size: body.size }, (err) => (err ? reject(err) : resolve()));
    const src = createReadStream(body.file);
    src.on("error", reject);
    src.pipe(entry);
  });
}

async function addTree(pack: tar.Pack, hostDir: string, imageDir: string, uid: number): Promise<void> {
  for (const e of [...Deno.readDirSync(hostDir)].sort((a, b) => a.name.localeCompare(b.name))) {
    const host = join(hostDir, e.name);
    const name = `${imageDir}/${e.name}`;
    if (e.isDirectory) {
      await add(pack, { name, type: "directory", mode: 0o755, uid, gid: uid });
      await addTree(pack, host, name, uid);
    } else if (e.isFile) {
      const st = Deno.statSync(host);
      await add(pack, { name, mode: st.mode! & 0o777, uid, gid: uid }, { file: host, size: st.size });
    }
  }
}

/** Copies the Debian root into the pack, with the station user added to /etc/passwd and /etc/group. */
function copyRootfs(pack: tar.Pack, rootfs: string): Promise<void> {
  const accounts: Record<string, string> = {
    "./etc/passwd": `station:x:${STATION_UID}:${STATION_UID}:stn:/home/station:/bin/sh\n`,
    "./etc/group": `station:x:${STATION_UID}:\n`,
  };
  return new Promise((resolve, reject) => {
    const extract = tar.extract();
    extract.on("entry", (header, stream, next) => {
      const extra = accounts[header.name];
      if (extra) {
        const chunks: Uint8Array[] = [];
        stream.on("data", (c) => chunks.push(c as Uint8Array));
        stream.on("end", () => {
          const text = new TextDecoder().decode(Buffer.concat(chunks)) + extra;
          pack.entry({ ...header, size: undefined }, text, next);
        });
        return;
      }
      stream.pipe(pack.entry(header, next));
    });
    extract.on("finish", resolve);
    extract.on("error", reject);
    createReadStream(rootfs).on("error", reject).pipe(extract);
  });
}

/** Writes the whole image file system into the pack, then ends it. */
async function fillImage(pack: tar.Pack, rootfs: string, inputs: Inputs): Promise<void> {
  await copyRootfs(pack, rootfs);
  const root = { uid: 0, gid: 0 };
  const user = { uid: STATION_UID, gid: STATION_UID };
  const file = (path: string) => ({ file: path, size: Deno.statSync(path).size });
  await add(pack, { name: "usr/local/bin/deno", mode: 0o755, ...root }, file(Deno.execPath()));
  await add(pack, { name: "usr/local/bin/nats-server", mode: 0o755, ...root }, file(inputs.natsServer));
  await add(pack, { name: "usr/local/bin/stn", mode: 0o755, ...root }, STN);
  await add(pack, { name: "usr/local/bin/stn-container", mode: 0o755, ...root }, ENTRY);
  await add(pack, { name: "home/station", type: "directory", mode: 0o755, ...user });
  await add(pack, { name: DATA_DIR.slice(1), type: "directory", mode: 0o700, ...user });
  await add(pack, { name: "workspace", type: "directory", mode: 0o755, ...root });
  await add(pack, { name: "opt/stn", type: "directory", mode: 0o755, ...root });
  const dirs = new Set<string>();
  for (const rel of inputs.sources) {
    const parts = rel.split("/").slice(0, -1);
    for (let i = 1; i <= parts.length; i++) {
      const dir = parts.slice(0, i).join("/");
      if (dirs.has(dir)) continue;
      dirs.add(dir);
      await add(pack, { name: `opt/stn/${dir}`, type: "directory", mode: 0o755, ...root });
    }
    await add(pack, { name: `opt/stn/${rel}`, mode: 0o644, ...root }, file(join(SOURCE_ROOT, rel)));
  }
  // The Deno cache is the station user's: Deno writes its transpile cache next to the packages.
  const npm = "opt/stn/deno-dir/npm/registry.npmjs.org";
  for (const dir of ["opt/stn/deno-dir", "opt/stn/deno-dir/npm", npm]) {
    await add(pack, { name: dir, type: "directory", mode: 0o755, ...user });
  }
  for (const pkg of inputs.packages) {
    if (pkg.startsWith("@")) {
      const scope = `${npm}/${pkg.split("/")[0]}`;
      if (!dirs.has(scope)) await add(pack, { name: scope, type: "directory", mode: 0o755, ...user });
      dirs.add(scope);
    }
    await add(pack, { name: `${npm}/${pkg}`, type: "directory", mode: 0o755, ...user });
    await addTree(pack, join(inputs.npmCache, pkg), `${npm}/${pkg}`, STATION_UID);
  }
  pack.finalize();
}

/** The Dockerfile-like settings `docker import` applies to the root file system. */
function importChanges(hash: string): string[] {
  return [
    `USER ${STATION_UID}:${STATION_UID}`,
    "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    `ENV STATION_HOME=${DATA_DIR}`,
    "ENV HOME=/home/station",
    "ENV DENO_DIR=/opt/stn/deno-dir",
    "ENV DENO_NO_UPDATE_CHECK=1",
    "WORKDIR /workspace",
    "EXPOSE 8585 8586 8587",
    `LABEL ${IMAGE_LABEL}=${BUILDER} dev.stn.content=${hash} dev.stn.version=${VERSION}`,
    'ENTRYPOINT ["/usr/local/bin/stn-container"]',
    'CMD ["serve", "--host", "0.0.0.0"]',
  ];
}

/** The cached Debian root (built by scripts/lib/debian_rootfs.sh the first time: about a minute). */
async function debianRootfs(): Promise<string> {
  try {
    return await output("bash", [ROOTFS_SCRIPT]);
  } catch (err) {
    throw buildFailed(
      `the Debian root file system could not be built: ${errorMessage(err)}`,
      "debootstrap needs the Debian mirror (STN_DEBIAN_MIRROR) and root; the lines above say what failed",
      err,
    );
  }
}

/** Builds the station image (`docker import` of a Debian root plus stn), tagged by content; returns the tag. */
export async function buildStationImage(
  docker: Docker,
  image: StationImage & { inputs: Inputs },
): Promise<string> {
  const rootfs = await debianRootfs();
  const previous = await docker.getImage(image.tag).inspect().then((i) => i.Id, () => undefined);
  const pack = tar.pack();
  const filling = fillImage(pack, rootfs, image.inputs).catch((err) => {
    pack.destroy(err);
    throw err;
  });
  const [repo, tag] = image.tag.split(":");
  try {
    // tar-stream's Pack is a Readable at run time; its types name a streamx stream, which dockerode's do not take.
    const stream = await docker.importImage(pack as unknown as Readable, {
      repo,
      tag,
      changes: importChanges(image.hash),
    } as Record<string, unknown>);
    await new Promise<void>((resolve, reject) => {
      docker.modem.followProgress(stream, (err: Error | null, events: { error?: string }[]) => {
        const failed = err?.message ?? events?.find((e) => e.error)?.error;
        if (failed) reject(new Error(failed));
        else resolve();
      });
    });
    await filling;
  } catch (err) {
    await filling.catch(() => {});
    throw buildFailed(
      `building image ${image.tag} failed: ${errorMessage(err)}`,
      "check `docker info` and free disk space, then run `stn image build` again",
      err,
    );
  }
  // A rebuild moves the tag; the image it leaves behind is removed unless a container still runs it.
  if (previous) await removeStationImage(docker, previous);
  return image.tag;
}

/** Removes a station image (by id or tag) when nothing uses it; true when it went. */
export async function removeStationImage(docker: Docker, image: string): Promise<boolean> {
  const info = await docker.getImage(image).inspect().catch(() => null);
  if (info?.Config?.Labels?.[IMAGE_LABEL] === undefined) return false;
  return await docker.getImage(image).remove().then(() => true, () => false);
}
