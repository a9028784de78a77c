import { join, relative, resolve, sep } from "node:path";
import { StationError } from "../errors.ts";

/**
 * Walking an environment folder without leaving it: a symlink is followed only when its target is
 * inside the same folder, so copying or bundling an environment never carries a file from elsewhere
 * on the machine (a link to ~/.ssh/id_rsa in agents/ is refused, not packed).
 */

/** 400 `unsafe_path` for a path that escapes its folder. */
export function unsafePath(path: string, why: string): StationError {
  return new StationError("unsafe_path", `${path}: ${why}`, {
    hint: "environments hold plain files; replace the link with the file itself",
  });
}

async function inside(root: string, path: string): Promise<boolean> {
  const real = await Deno.realPath(path);
  const realRoot = await Deno.realPath(root);
  return real === realRoot || real.startsWith(realRoot + sep);
}

/** A file of the folder, by relative path (POSIX separators). */
export interface FolderFile {
  path: string;
  /** Absolute path to read it from. */
  abs: string;
  mode: number;
  size: number;
}

/** Every regular file under `root` (links inside it followed, links out refused), sorted by path. */
export async function folderFiles(root: string, dir = root): Promise<FolderFile[]> {
  const out: FolderFile[] = [];
  for await (const e of Deno.readDir(dir)) {
    const abs = join(dir, e.name);
    const rel = relative(root, abs).split(sep).join("/");
    if (e.isSymlink && !(await inside(root, abs).catch(() => false))) {
      throw unsafePath(rel, "a link to somewhere outside the environment folder");
    }
    const info = await Deno.stat(abs);
    if (info.isDirectory) {
      if (e.isSymlink) throw unsafePath(rel, "a link to a folder");
      out.push(...await folderFiles(root, abs));
    } else if (info.isFile) {
      out.push({ path: rel, abs: resolve(abs), mode: (info.mode ?? 0o644) & 0o777, size: info.size });
    }
  }
  return out.sort((a, b) => a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
}

/** True when a file or folder exists at path (a dangling link counts). */
export async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return false;
    throw err;
  }
}
