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
  return resolved;
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
