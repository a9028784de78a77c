/** The sandbox errors: what a missing path, a refused one or an engine failure answers. */

import { StationError } from "../errors.ts";
import type { ExecResult } from "./backend.ts";

/** 404: nothing at that workspace path. */
export function notFound(path: string): StationError {
  return new StationError("file_not_found", `no such file or directory in the sandbox: ${path}`, {
    status: 404,
  });
}

/** 400: a file operation was pointed at a directory. */
export function isDirectory(path: string): StationError {
  return new StationError("is_a_directory", `${path} is a directory, not a file`, { status: 400 });
}

/** The error for a file over a size limit. */
export function tooLarge(path: string, size: number, max: number): StationError {
  return new StationError("file_too_large", `${path} is ${size} bytes, over the ${max}-byte limit`, {
    status: 413,
    hint: "raise sandbox.max_file_size, or move large files with stage/publish through the file store",
  });
}

/** 400: a path that leaves /workspace, or that would have to follow a symlink to be read. */
export function outsideWorkspace(path: string, why: string, hint?: string): StationError {
  return new StationError("path_outside_workspace", `path ${JSON.stringify(path)} is not allowed: ${why}`, {
    status: 400,
    hint: hint ?? "read the file through its real path inside /workspace",
    exitCode: 2,
  });
}

/** 504: a Docker Engine call (or a helper command in the container) did not answer in time. */
export function sandboxTimeout(what: string, ms: number): StationError {
  return new StationError(
    "sandbox_timeout",
    `${what}: the Docker Engine did not answer within ${Math.round(ms / 1000)}s`,
    {
      status: 504,
      hint: "retry; if it keeps happening, check the Docker Engine (docker info) and sandbox.docker_timeout",
    },
  );
}

/** 500: a helper command (list, delete, read) failed in an unexpected way. */
export function commandFailed(what: string, res: ExecResult): StationError {
  return new StationError(
    "sandbox_command_failed",
    `${what} failed (exit ${res.exit_code}): ${res.stderr.trim()}`,
    { status: 500 },
  );
}

/** Turns an engine failure into a StationError; a vanished container is a 410. */
export function engineError(what: string, err: unknown): StationError {
  if (err instanceof StationError) return err;
  const e = err as { statusCode?: number; message?: string; json?: { message?: string } };
  const reason = e?.json?.message ?? e?.message ?? String(err);
  if (e?.statusCode === 404 && /container/i.test(reason)) {
    return new StationError("sandbox_gone", `${what}: the sandbox container no longer exists`, {
      status: 410,
      hint: "open a new sandbox",
    });
  }
  if (e?.statusCode === 409 && /not running|paused/i.test(reason)) {
    return new StationError("sandbox_not_running", `${what}: the sandbox container is not running`, {
      status: 409,
    });
  }
  return new StationError("docker_error", `${what}: ${reason}`, {
    status: 502,
    hint: "is the Docker Engine running and reachable (docker info)?",
  });
}

/** 400: a read of something that is not a regular file (a FIFO, a device). */
export function notAFile(target: string): StationError {
  return new StationError("not_a_file", `${target} is not a regular file`, { status: 400 });
}

/** 400: a read of a name that is a symlink, which is never followed. */
export function symlinkNotAFile(target: string, to: string): StationError {
  return new StationError("not_a_file", `${target} is a symlink (to ${to}), not a file`, {
    status: 400,
    hint: "read the file through its real path inside /workspace",
  });
}

/** 400: a path that goes through a symlink (a parent, or a listed directory itself). */
export function throughSymlink(path: string, link: string, to: string): StationError {
  return outsideWorkspace(path, `${link} is a symlink (to ${to})`);
}

/** 400: a listing of something that is not a directory. */
export function notADirectory(dir: string): StationError {
  return new StationError("not_a_directory", `${dir} is not a directory`, { status: 400 });
}

/** 403: the sandbox user may not open the file. */
export function fileUnreadable(target: string): StationError {
  return new StationError("file_unreadable", `${target} cannot be opened by the sandbox user`, {
    status: 403,
    hint: "make it readable inside the sandbox (chmod u+r)",
  });
}

/** 409: a write's directory could not be made, or changed under it. */
export function pathChanged(target: string, detail: string): StationError {
  return new StationError(
    "path_changed",
    `the directory of ${target} could not be made or went away: ${detail}`,
    { status: 409, hint: "something in the sandbox is changing that path; retry once it is done" },
  );
}

/** 409: a symlink met while opening a path was gone when looked at (something is swapping it): ELOOP. */
export function changedWhileOpened(target: string): StationError {
  return new StationError("path_changed", `${target} changed while it was opened (a symlink came and went)`, {
    status: 409,
    hint: "something in the sandbox is changing that path; retry once it is done",
  });
}

/** 507: a write found the sandbox's /workspace full (its tmpfs is sandbox.disk_mb, given when known). */
export function diskFull(target: string, diskMb?: number): StationError {
  const size = diskMb === undefined ? "" : `: ${diskMb} MiB`;
  return new StationError(
    "sandbox_disk_full",
    `writing ${target}: the sandbox's /workspace is full (sandbox.disk_mb${size}); the old file, if any, is unchanged`,
    {
      status: 507,
      hint: "delete files in the sandbox (stn sandbox rm), or raise sandbox.disk_mb in config.yaml",
    },
  );
}

/** Whether a failed write's error says the filesystem was out of space or inodes (ENOSPC, EDQUOT). */
export function isNoSpace(err: unknown): boolean {
  return err instanceof StationError &&
    (err.code === "sandbox_disk_full" || /No space left on device|Disk quota exceeded/.test(err.message));
}

/** 400: a write whose data was not the announced size. */
export function sizeMismatch(target: string, size: number): StationError {
  return new StationError(
    "size_mismatch",
    `the data for ${target} did not have the announced ${size} bytes`,
    {
      status: 400,
    },
  );
}

/** 409: the file shrank while it was read (a streamed body is cut off, never finished short). */
export function fileChanged(target: string, size: number, passed: number): StationError {
  return new StationError(
    "file_changed",
    `${target} shrank from ${size} to ${passed} bytes while it was read`,
    {
      status: 409,
      hint: "read it again once the command writing it is done",
    },
  );
}

/** 400: a delete of a directory without recursive. */
export function deleteNeedsRecursive(target: string): StationError {
  return new StationError("is_a_directory", `${target} is a directory`, {
    status: 400,
    hint: "delete it with recursive (API ?recursive=1, CLI -r)",
  });
}

/** 400: a delete of /workspace itself. */
export function deleteWorkspaceRefused(workspace: string): StationError {
  return new StationError("path_outside_workspace", `refusing to delete ${workspace} itself`, {
    status: 400,
    hint: "delete the entries inside it, or close the sandbox",
    exitCode: 2,
  });
}
