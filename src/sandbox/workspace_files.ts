import { Buffer } from "node:buffer";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import tar from "tar-stream";
import { StationError } from "../errors.ts";
import type { FileEntry } from "./backend.ts";
import { deadline } from "./deadline.ts";
import { commandFailed, engineError, isDirectory, notFound } from "./errors.ts";
import { type ExecContext, runInternal } from "./exec.ts";
import { relativeToWorkspace, WORKSPACE, workspacePath } from "./paths.ts";

/**
 * Streams `size` bytes into a workspace file through the engine's archive endpoint (parents created,
 * all owned by the sandbox user). The engine answers once it has extracted the archive; after the
 * last byte is sent it gets sandbox.docker_timeout to do so.
 */
export async function writeWorkspaceFile(
  ctx: ExecContext,
  containerId: string,
  path: string,
  data: Readable | Uint8Array,
  size: number,
  mode = 0o644,
): Promise<void> {
  const target = workspacePath(path);
  const rel = relativeToWorkspace(target);
  if (rel === "") throw isDirectory(path);
  const owner = { uid: ctx.uid, gid: ctx.gid };
  const pack = tar.pack();
  // A failing entry destroys the pack; that failure is reported through entryDone.
  pack.on("error", () => {});
  const parts = rel.split("/");
  for (let i = 1; i < parts.length; i++) {
    pack.entry({ name: parts.slice(0, i).join("/"), type: "directory", mode: 0o755, ...owner });
  }
  const entryDone = new Promise<void>((resolve, reject) => {
    const entry = pack.entry({ name: rel, size, mode, ...owner }, (err) => {
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
  const put = ctx.docker.getContainer(containerId).putArchive(pack as unknown as Readable, {
    path: WORKSPACE,
  });
  try {
    await Promise.all([
      put,
      entryDone.then(() => deadline(put, ctx.callTimeoutMs, `writing ${target}`)),
    ]);
  } catch (err) {
    if (err instanceof StationError) throw err;
    const message = (err as Error).message ?? String(err);
    if (/size mismatch|too short|premature/i.test(message)) {
      throw new StationError(
        "size_mismatch",
        `the data for ${target} did not have the announced ${size} bytes`,
        { status: 400 },
      );
    }
    throw engineError(`writing ${target}`, err);
  }
}

/** Lists a workspace directory (as the sandbox user: it can only show what that user can see). */
export async function listWorkspace(
  ctx: ExecContext,
  containerId: string,
  path: string,
  recursive: boolean,
): Promise<FileEntry[]> {
  const dir = workspacePath(path);
  const depth = recursive ? "" : "-maxdepth 1";
  const script = `[ -e "$1" ] || exit 3; [ -d "$1" ] || exit 4
      find "$1" -mindepth 1 ${depth} -exec stat -c '%n\t%s\t%a\t%Y\t%F' {} +`;
  const res = await runInternal(ctx, containerId, ["/bin/sh", "-c", script, "list", dir]);
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

/** Deletes a workspace file, or a directory with recursive (as the sandbox user). */
export async function deleteWorkspacePath(
  ctx: ExecContext,
  containerId: string,
  path: string,
  recursive: boolean,
): Promise<void> {
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
  const res = await runInternal(ctx, containerId, [
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
