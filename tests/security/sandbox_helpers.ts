import { testBackend } from "../sandbox/backend.ts";
import { errorMessage } from "../../src/errors.ts";

/** What one raw API read answered: status and error code, or the body and whether it was complete. */
export interface ReadOutcome {
  status: number;
  code?: string;
  message?: string;
  body?: Uint8Array;
  /** Content-Length announced with a 200. */
  announced?: number;
  /** The 200's body was cut off (the connection was dropped before Content-Length bytes came). */
  aborted?: boolean;
  /** No answer within the bound: the request hung. */
  hung?: boolean;
  /** The server could not be reached at all (e.g. it died). */
  unreachable?: string;
}

/** Sends one request and classifies its answer, never throwing; a request over boundMs counts as hung. */
export async function request(
  url: string,
  token: string | undefined,
  init: RequestInit = {},
  boundMs = 45_000,
): Promise<ReadOutcome> {
  const headers = new Headers(init.headers);
  if (token) headers.set("authorization", `Bearer ${token}`);
  const signal = AbortSignal.timeout(boundMs);
  let res: Response;
  try {
    res = await fetch(url, { ...init, headers, signal });
  } catch (err) {
    if (signal.aborted) return { status: 0, hung: true };
    return { status: 0, unreachable: errorMessage(err) };
  }
  if (res.status !== 200 && res.status !== 201) {
    const body = await res.json().catch(() => undefined) as
      | { error?: { code?: string; message?: string } }
      | undefined;
    return { status: res.status, code: body?.error?.code, message: body?.error?.message };
  }
  const announced = res.headers.has("content-length") ? Number(res.headers.get("content-length")) : undefined;
  try {
    return { status: res.status, body: new Uint8Array(await res.arrayBuffer()), announced };
  } catch {
    if (signal.aborted) return { status: res.status, hung: true };
    return { status: res.status, announced, aborted: true };
  }
}

/** Runs a shell command as root inside a container (test set-up only, e.g. planting a root-only file). */
export async function asRoot(containerId: string, script: string): Promise<void> {
  const exec = await testBackend().docker.getContainer(containerId).exec({
    Cmd: ["sh", "-c", script],
    User: "0",
  });
  await new Promise((resolve) => exec.start({}, (_e, stream) => stream?.on("end", resolve).resume()));
}

/**
 * Runs fn repeatedly for ms (at least once), then on until enough() says the rounds showed what they
 * had to (on a loaded machine a race may need longer), but never past maxMs; returns the round count.
 */
export async function repeatFor(
  ms: number,
  fn: () => Promise<void>,
  enough: () => boolean = () => true,
  maxMs = 3 * ms,
): Promise<number> {
  const start = Date.now();
  let n = 0;
  do {
    await fn();
    n++;
  } while (Date.now() - start < maxMs && (Date.now() - start < ms || !enough()));
  return n;
}
