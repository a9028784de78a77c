/** StationClient: the typed HTTP client of the API; every CLI command talks to a station through it. */

import type { Health, Version } from "../contract/health.ts";
import { IDEMPOTENCY_KEY_HEADER } from "../contract/headers.ts";
import { errorMessage, fromErrorBody, StationError } from "../errors.ts";
import { lazyImport } from "../lib/lazy_import.ts";
import type { Answer } from "./answer.ts";

// Their checks load when a command asks for them, not on every command's start (docs/benchmarks.md).
const healthAnswers = () =>
  lazyImport<typeof import("./answers/health.ts")>("./answers/health.ts", import.meta.url);

export interface StationClientOptions {
  /** Bearer token for servers bound beyond loopback. */
  token?: string;
  /** Per-request timeout for JSON calls (ms); streaming calls are not bounded. */
  timeoutMs?: number;
  /** The fetch to send requests with; in-process callers (MCP server, dashboard) pass the app's own. */
  fetch?: typeof fetch;
}

export interface RequestOptions {
  body?: unknown;
  query?: Record<string, string | number | boolean | undefined>;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/** Options of a JSON call; with `answer`, the answer is checked against the API contract. */
export interface JsonOptions<T> extends RequestOptions {
  answer?: Answer<T>;
}

/** Checks an answer against its contract; a mismatch is a clear `invalid_response`, not a crash later. */
export function parseAnswer<T>(answer: Answer<T>, value: unknown, what: string): T {
  if (answer.check(value)) return value as T;
  const issues = (answer.check.errors ?? []).map((e) => ({
    path: e.instancePath || "/",
    message: e.message,
  }));
  throw new StationError(
    "invalid_response",
    `${what}: the answer does not match the API contract: ${
      issues.map((i) => `${i.path}: ${i.message}`).join("; ")
    }`,
    {
      hint: "the server may run another stn version than this CLI (`stn status` shows the server's)",
      details: { issues },
    },
  );
}

/** Tries of a start the client repeats after a failure that may not have reached the server, and the waits between. */
const START_RETRY_DELAYS_MS = [500, 2_000];

/**
 * Sends a run start with one Idempotency-Key for every try (the caller's, else a new UUID), trying again
 * when the server was not reached or did not answer in time: the key makes a start that did reach it
 * answer the same run, so a retry never starts a second one. `send` gets the headers to send.
 */
export async function startIdempotently<T>(
  key: string | undefined,
  send: (headers: Record<string, string>) => Promise<T>,
  signal?: AbortSignal,
): Promise<T> {
  const headers = { [IDEMPOTENCY_KEY_HEADER]: key ?? crypto.randomUUID() };
  for (let i = 0;; i++) {
    try {
      return await send(headers);
    } catch (err) {
      const lost = (err instanceof StationError && err.code === "station_unreachable") ||
        (err as Error).name === "TimeoutError";
      if (!lost || signal?.aborted || i >= START_RETRY_DELAYS_MS.length) throw err;
      await new Promise((r) => setTimeout(r, START_RETRY_DELAYS_MS[i]));
    }
  }
}

/** Typed client of the stn HTTP API; every CLI command talks to the runtime through it. */
export class StationClient {
  readonly baseUrl: string;
  #token?: string;
  #timeoutMs: number;
  #fetch: typeof fetch;

  constructor(baseUrl: string, options: StationClientOptions = {}) {
    this.baseUrl = baseUrl.replace(/\/+$/, "");
    this.#token = options.token;
    this.#timeoutMs = options.timeoutMs ?? 30_000;
    this.#fetch = options.fetch ?? fetch;
  }

  /** Builds the absolute URL of an API path with query parameters. */
  url(path: string, query?: RequestOptions["query"]): string {
    const u = new URL(this.baseUrl + path);
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) u.searchParams.set(k, String(v));
    return u.toString();
  }

  /** Sends a raw request (for streams); the response is returned as-is, errors are thrown as StationError. */
  async fetch(method: string, path: string, init: RequestInit & RequestOptions = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.#token) headers.set("authorization", `Bearer ${this.#token}`);
    let res: Response;
    try {
      res = await this.#fetch(this.url(path, init.query), { ...init, method, headers });
    } catch (err) {
      if (init.signal?.aborted) throw err;
      throw new StationError(
        "station_unreachable",
        `cannot reach stn at ${this.baseUrl}: ${errorMessage(err)}`,
        {
          hint: "is the server running? check --station / STATION_URL, or `stn status`",
          cause: err,
        },
      );
    }
    if (!res.ok) {
      const body = await res.json().catch(() => undefined);
      throw fromErrorBody(res.status, body);
    }
    return res;
  }

  /**
   * Sends a JSON request and parses the JSON answer, checked against `options.answer` when given (the
   * client's calls always give one; without it the answer is unchecked, for ad-hoc calls and tests).
   */
  async json<T = unknown>(method: string, path: string, options: JsonOptions<T> = {}): Promise<T> {
    const signal = options.signal ?? AbortSignal.timeout(this.#timeoutMs);
    const res = await this.fetch(method, path, {
      query: options.query,
      signal,
      headers: {
        ...(options.body !== undefined ? { "content-type": "application/json" } : {}),
        ...options.headers,
      },
      body: options.body !== undefined ? JSON.stringify(options.body) : undefined,
    });
    const body = res.status === 204 ? undefined : await res.json().catch((err) => {
      if (!(err instanceof SyntaxError)) throw err;
      throw new StationError("invalid_response", `${method} ${path}: the answer is not JSON: ${err.message}`);
    });
    return options.answer ? parseAnswer(options.answer, body, `${method} ${path}`) : body as T;
  }

  /** GET /health; a 503 answer is returned as data, not thrown. */
  async health(): Promise<Health> {
    const headers: Record<string, string> = this.#token ? { authorization: `Bearer ${this.#token}` } : {};
    let res: Response;
    try {
      res = await this.#fetch(this.url("/health"), { headers, signal: AbortSignal.timeout(this.#timeoutMs) });
    } catch (err) {
      throw new StationError(
        "station_unreachable",
        `cannot reach stn at ${this.baseUrl}: ${errorMessage(err)}`,
        {
          hint: "is the server running? check --station / STATION_URL, or `stn status`",
        },
      );
    }
    const body = await res.json().catch(() => undefined);
    if (res.status !== 200 && res.status !== 503) throw fromErrorBody(res.status, body);
    return parseAnswer((await healthAnswers()).Health, body, "GET /health");
  }

  /** GET /api/v1/version */
  async version(): Promise<Version> {
    return this.json("GET", "/api/v1/version", { answer: (await healthAnswers()).Version });
  }
}
