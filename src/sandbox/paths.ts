/** Workspace paths: a user's path resolved inside /workspace, or refused. */

import { posix } from "node:path";
import { StationError } from "../errors.ts";

/** The directory every sandbox file operation is confined to. */
export const WORKSPACE = "/workspace";

/**
 * Resolves a user path to an absolute path inside /workspace. Relative paths are taken from
 * /workspace; absolute paths must already be inside it. Anything that leaves it (`..`, /etc/…) is
 * rejected, never remapped (the Go project silently turned /etc/passwd into /workspace/etc/passwd).
 */
export function workspacePath(path: string): string {
  if (typeof path !== "string" || path.trim() === "") {
    throw pathError(path, "the path is empty");
  }
  if (path.includes("\0")) throw pathError(path, "the path contains a NUL byte");
  const absolute = path.startsWith("/") ? posix.normalize(path) : posix.normalize(`${WORKSPACE}/${path}`);
  const resolved = absolute.length > 1 ? absolute.replace(/\/+$/, "") : absolute;
  if (resolved !== WORKSPACE && !resolved.startsWith(WORKSPACE + "/")) {
    throw pathError(path, `it resolves to ${resolved}, outside ${WORKSPACE}`);
  }
  checkLengths(resolved);
  return resolved;
}

/** Linux's limits (NAME_MAX, PATH_MAX less its NUL): past them every file call fails with ENAMETOOLONG. */
const NAME_MAX = 255;
const PATH_MAX = 4095;

/** Refuses a path the kernel would refuse (`Filename too long`) before it reaches the sandbox: 400 path_invalid. */
function checkLengths(resolved: string): void {
  const bytes = (s: string) => new TextEncoder().encode(s).length;
  const long = resolved.split("/").find((name) => bytes(name) > NAME_MAX);
  if (long === undefined && bytes(resolved) <= PATH_MAX) return;
  const why = long === undefined
    ? `it is ${bytes(resolved)} bytes long, over ${PATH_MAX}`
    : `the name ${JSON.stringify(long.slice(0, 40) + "…")} is ${bytes(long)} bytes long, over ${NAME_MAX}`;
  throw new StationError("path_invalid", `the sandbox path is not valid: ${why}`, {
    status: 400,
    hint: `each name in a path may have at most ${NAME_MAX} bytes (UTF-8), the whole path ${PATH_MAX}`,
    exitCode: 2,
  });
}

/** The path relative to /workspace ("" for the workspace itself). */
export function relativeToWorkspace(absolute: string): string {
  return absolute === WORKSPACE ? "" : absolute.slice(WORKSPACE.length + 1);
}

function pathError(path: string, why: string): StationError {
  return new StationError("path_outside_workspace", `path ${JSON.stringify(path)} is not allowed: ${why}`, {
    status: 400,
    hint: `sandbox paths are relative to ${WORKSPACE} (e.g. "data/in.csv") or absolute inside it`,
    exitCode: 2,
  });
}
