/** Reading a local file or stdin for a command, with errors in words instead of the OS's. */

import { errorMessage, StationError } from "../errors.ts";

/** How a command names stdin in messages and results when a path argument is `-`. */
export const STDIN_NAME = "<stdin>";

/**
 * A local file that cannot be read, in words instead of the OS's (`cannot read x.yaml: no such file`).
 * Always exit 1: the command line was fine, the file system said no.
 */
export function localFileError(path: string, err: unknown): StationError {
  if (err instanceof StationError) return err;
  if (err instanceof Deno.errors.NotFound) {
    return new StationError("local_file_not_found", `cannot read ${path}: no such file`, {
      hint: `check the path (relative paths start at ${Deno.cwd()})`,
    });
  }
  const reason = err instanceof Deno.errors.PermissionDenied
    ? "permission denied"
    : err instanceof Deno.errors.IsADirectory
    ? "it is a directory"
    : errorMessage(err);
  return new StationError("local_file_unreadable", `cannot read ${path}: ${reason}`, {
    hint: "check the path and the file's permissions",
  });
}

/** Reads a local file, or stdin for `-`, with a clean error when it cannot. */
export async function readLocalBytes(path: string): Promise<Uint8Array> {
  try {
    if (path === "-") return new Uint8Array(await new Response(Deno.stdin.readable).arrayBuffer());
    return await Deno.readFile(path);
  } catch (err) {
    throw localFileError(path, err);
  }
}

/** Reads a local text file, or stdin for `-`, with a clean error when it cannot. */
export async function readLocalText(path: string): Promise<string> {
  return new TextDecoder().decode(await readLocalBytes(path));
}
