/** Workspace file operations over docker exec, as the sandbox user (the channel's fallback). */

import { Buffer } from "node:buffer";
import { once } from "node:events";
import type { Readable, Writable } from "node:stream";
import { StationError } from "../errors.ts";
import type { FileContent, FileEntry } from "./backend.ts";
import { deadline } from "./deadline.ts";
import {
  commandFailed,
  deleteNeedsRecursive,
  deleteWorkspaceRefused,
  diskFull,
  engineError,
  isDirectory,
  notADirectory,
  notFound,
  outsideWorkspace,
  pathChanged,
  sizeMismatch,
} from "./errors.ts";
import { demuxer, ended, type ExecContext, runInternal, startExec } from "./exec.ts";
import { WORKSPACE, workspacePath } from "./paths.ts";

/**
 * Writes a workspace file as the sandbox user, in one exec. The engine's archive endpoint would
 * extract as root and follow a symlink swapped into the path between two of its steps; here the
 * writer can only ever touch what the sandbox user may, and it checks where it really is: it walks
 * down to the directory (replacing a symlink or file in the way with a directory, as an archive
 * would), `cd -P`s into it — which pins the directory, whatever happens to its name afterwards — and
 * refuses unless `pwd -P` (the kernel's path of that pinned directory) is the one asked for. The
 * bytes go to a new temporary name created with noclobber (O_EXCL: never through a link), are
 * counted, and are renamed over the final name (rename replaces a link, it does not follow it), so
 * a failed or short write leaves the previous file as it was.
 * Exit codes: 4 the name is a directory, 6 a parent cannot be made or the directory went away
 * meanwhile, 8 the write failed, 9 fewer bytes than announced, 10 the directory is not where it was
 * asked to be (its real path on stderr), 11 the write failed with the filesystem out of blocks or inodes
 * (looked up with `stat -f`, as some tools, busybox's among them, report ENOSPC as an I/O error).
 */
const WRITE_SCRIPT = `t=$1 size=$2 mode=$3
d=\${t%/*} n=\${t##*/}
p=/workspace r=\${d#/workspace}; r=\${r#/}
while [ -n "$r" ]; do
  c=\${r%%/*}
  if [ "$c" = "$r" ]; then r=; else r=\${r#*/}; fi
  p=$p/$c
  if [ -L "$p" ] || { [ -e "$p" ] && [ ! -d "$p" ]; }; then rm -f -- "$p" || exit 6; fi
  [ -d "$p" ] || mkdir -- "$p" || exit 6
done
cd -P -- "$d" || exit 6
[ "$(pwd -P)" = "$d" ] || { pwd -P >&2; exit 10; }
if [ -d "$n" ] && [ ! -L "$n" ]; then exit 4; fi
tmp=.stn-write-$$
fail() { rm -f -- "$tmp"; [ . -ef "$d" ] || exit 6; exit "$1"; }
rm -f -- "$tmp"
set -C
head -c "$size" > "$tmp" || { case $(stat -f -c %a.%d .) in 0.*|*.0) fail 11;; esac; fail 8; }
set +C
[ "$(stat -c %s "$tmp")" = "$size" ] || fail 9
chmod "$mode" "$tmp" && mv -f -- "$tmp" "$n" || fail 8`;

/** Streams exactly `size` bytes into a workspace file (parents created, all owned by the sandbox user). */
export async function writeWorkspaceFile(
  ctx: ExecContext,
  containerId: string,
  path: string,
  { data, size, mode = 0o644 }: FileContent,
): Promise<void> {
  const target = workspacePath(path);
  if (target === WORKSPACE) throw isDirectory(path);
  const proc = await startExec(ctx, containerId, {
    cmd: ["/bin/sh", "-c", WRITE_SCRIPT, "write", target, String(size), mode.toString(8)],
    group: ctx.gid,
    stdin: true,
  });
  const stderr: Buffer[] = [];
  const out = demuxer((b) => stderr.push(b));
  out.on("error", () => {});
  proc.raw.pipe(out).resume();
  const done = ended(proc.raw);
  let unsent: unknown;
  try {
    await send(proc.raw, data, size);
  } catch (err) {
    // The writer sees the input end short and removes its temporary file; the old file stays.
    proc.raw.destroy();
    if (err instanceof StationError) throw err;
    unsent = err;
  }
  if (unsent === undefined) {
    await deadline(done, ctx.callTimeoutMs, `writing ${target}`).catch((err) => {
      proc.raw.destroy();
      throw err;
    });
  }
  const code = await proc.exitCode();
  // Input that could not be sent: the writer stopped taking it because it failed (a full disk), and its
  // exit code says why; without one, the engine's connection failed.
  if (unsent !== undefined && !code) throw engineError(`writing ${target}`, unsent);
  const detail = Buffer.concat(stderr).toString().trim();
  switch (code) {
    case 0:
      return;
    case 4:
      throw isDirectory(path);
    case 6:
      throw pathChanged(target, detail);
    case 9:
      throw sizeMismatch(target, size);
    case 10:
      throw outsideWorkspace(path, `its directory resolves to ${detail}`);
    case 11:
      throw diskFull(target);
    default:
      throw new StationError(
        "sandbox_command_failed",
        `writing ${target} failed (exit ${code ?? "unknown"}): ${detail}`,
        { status: 500 },
      );
  }
}

/** Sends exactly size bytes to the command's stdin, then closes it; more or fewer is a size_mismatch. */
async function send(stdin: Writable, data: Readable | Uint8Array, size: number): Promise<void> {
  if (data instanceof Uint8Array) {
    if (data.length !== size) throw sizeMismatch("the file", size);
    await new Promise<void>((resolve, reject) =>
      stdin.end(data, (err?: Error | null) => err ? reject(err) : resolve())
    );
    return;
  }
  let sent = 0;
  for await (const chunk of data) {
    sent += (chunk as Uint8Array).length;
    if (sent > size) {
      data.destroy();
      throw sizeMismatch("the file", size);
    }
    if (!stdin.write(chunk)) await once(stdin, "drain");
  }
  if (sent !== size) throw sizeMismatch("the file", size);
  await new Promise<void>((resolve, reject) =>
    stdin.end((err?: Error | null) => err ? reject(err) : resolve())
  );
}

/**
 * Lists a workspace directory as the sandbox user, from inside it: `cd -P` pins the directory and
 * `pwd -P` must be the one asked for, so a symlinked path cannot list somewhere else.
 */
export async function listWorkspace(
  ctx: ExecContext,
  containerId: string,
  path: string,
  recursive: boolean,
): Promise<FileEntry[]> {
  const dir = workspacePath(path);
  const depth = recursive ? "" : "-maxdepth 1";
  const script = `[ -e "$1" ] || exit 3; [ -d "$1" ] || exit 4
      cd -P -- "$1" || exit 3
      [ "$(pwd -P)" = "$1" ] || { pwd -P >&2; exit 10; }
      find . -mindepth 1 ${depth} -exec stat -c '%n\t%s\t%a\t%Y\t%F' {} +`;
  const res = await runInternal(ctx, containerId, ["/bin/sh", "-c", script, "list", dir]);
  if (res.exit_code === 3) throw notFound(path);
  if (res.exit_code === 4) {
    throw notADirectory(dir);
  }
  if (res.exit_code === 10) throw outsideWorkspace(path, `it resolves to ${res.stderr.trim()}`);
  if (res.exit_code !== 0) throw commandFailed(`listing ${dir}`, res);
  const prefix = "./";
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

/**
 * Deletes a workspace file, or a directory with recursive, as the sandbox user from inside its pinned
 * parent directory (checked with `pwd -P`): a link as the last name is removed itself, not followed.
 */
export async function deleteWorkspacePath(
  ctx: ExecContext,
  containerId: string,
  path: string,
  recursive: boolean,
): Promise<void> {
  const target = workspacePath(path);
  if (target === WORKSPACE) {
    throw deleteWorkspaceRefused(WORKSPACE);
  }
  const script = `d=\${1%/*} n=\${1##*/}
      cd -P -- "$d" 2>/dev/null || exit 3
      [ "$(pwd -P)" = "$d" ] || { pwd -P >&2; exit 10; }
      [ -e "$n" ] || [ -L "$n" ] || exit 3
      if [ -d "$n" ] && [ ! -L "$n" ] && [ "$2" != r ]; then exit 4; fi
      rm -rf -- "$n"`;
  const res = await runInternal(ctx, containerId, [
    "/bin/sh",
    "-c",
    script,
    "rm",
    target,
    recursive ? "r" : "",
  ]);
  if (res.exit_code === 3) throw notFound(path);
  if (res.exit_code === 10) throw outsideWorkspace(path, `its directory resolves to ${res.stderr.trim()}`);
  if (res.exit_code === 4) {
    throw deleteNeedsRecursive(target);
  }
  if (res.exit_code !== 0) throw commandFailed(`deleting ${target}`, res);
}
