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
