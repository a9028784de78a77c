import { type ErrorCode, errorCodeInfo, isErrorCode } from "./error_codes.ts";

export type { ErrorCode } from "./error_codes.ts";

/**
 * The one error type of stn (docs/design/errors.md#one-error-type). Everything a user can meet — a bad config
 * value, a missing binary, an API 4xx — is a StationError with a stable `code` from the catalogue
 * (`error_codes.ts`), an HTTP status, and usually a hint.
 */
export interface StationErrorOptions {
  /** HTTP status; defaults to the code's status in the catalogue. */
  status?: number;
  hint?: string;
  details?: unknown;
  cause?: unknown;
  /**
   * CLI exit code when this error ends a command (docs/design/errors.md#exit-codes: 1 failure, 2 usage);
   * defaults to the catalogue's.
   */
  exitCode?: number;
}

/** The JSON body every API error is answered with. */
export interface ErrorBody {
  error: { code: string; message: string; hint?: string; details?: unknown };
}

/** An expected failure with a stable code, an HTTP status and an optional hint for the user. */
export class StationError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly hint?: string;
  readonly details?: unknown;
  readonly exitCode: number;

  constructor(code: ErrorCode, message: string, options: StationErrorOptions = {}) {
    super(message, { cause: options.cause });
    this.name = "StationError";
    this.code = code;
    // A code off the wire from a newer server may be missing from this catalogue: it stays as it came.
    const info = isErrorCode(code) ? errorCodeInfo(code) : { status: 500, exit: 1 };
    this.status = options.status ?? info.status;
    this.hint = options.hint;
    this.details = options.details;
    this.exitCode = options.exitCode ?? info.exit;
  }

  /** The API body for this error (docs/design/errors.md#the-apis-error-body). */
  toBody(): ErrorBody {
    const error: ErrorBody["error"] = { code: this.code, message: this.message };
    if (this.hint) error.hint = this.hint;
    if (this.details !== undefined) error.details = this.details;
    return { error };
  }
}

/** A usage error: bad flags, bad config values. Exits 2. */
export function usageError(code: ErrorCode, message: string, hint?: string, details?: unknown): StationError {
  return new StationError(code, message, { status: 400, hint, details, exitCode: 2 });
}

const NOUNS = {
  run: "workflow run",
  approval: "approval",
  workflow: "workflow",
  file: "file",
  sandbox: "sandbox",
};

/** A 404 for a missing thing: `notFound("run", id)` is `run_not_found`, "no workflow run <id>". */
export function notFound(kind: keyof typeof NOUNS, id: string, hint?: string): StationError {
  return new StationError(`${kind}_not_found`, `no ${NOUNS[kind]} ${id}`, { hint });
}

/** The message of anything thrown: an Error's `message`, anything else as a string. */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Normalises anything thrown into a StationError without leaking internals. */
export function toStationError(err: unknown): StationError {
  if (err instanceof StationError) return err;
  const message = errorMessage(err);
  return new StationError("internal_error", message || "internal error", { status: 500, cause: err });
}

/** Parses an API error body back into a StationError (client side). */
export function fromErrorBody(status: number, body: unknown): StationError {
  const e = (body as ErrorBody | undefined)?.error;
  if (e && typeof e.code === "string" && typeof e.message === "string") {
    return new StationError(e.code as ErrorCode, e.message, { status, hint: e.hint, details: e.details });
  }
  return new StationError("http_error", `server answered ${status}`, { status });
}
