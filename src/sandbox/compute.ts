import { ulid } from "ulid";
import { StationError } from "../errors.ts";
import type { Config } from "../config/schema.ts";
import type { ExecResult, OutputStream, SandboxBackend } from "./backend.ts";
import { tooLarge } from "./errors.ts";
import { chooseImage, INTERPRETERS } from "./images.ts";
import { LABELS } from "./labels.ts";

/** Compute mode: one ephemeral container for one piece of code. */
export interface RunRequest {
  runtime?: string;
  image?: string;
  code: string;
  /** Extra files (path → text) written into /workspace first. */
  files?: Record<string, string>;
  args?: string[];
  env?: Record<string, string>;
  timeout_ms?: number;
  signal?: AbortSignal;
  onOutput?: (stream: OutputStream, chunk: Uint8Array) => void;
}

/** What a compute-mode run returns. */
export type RunResult = ExecResult & { runtime: string; image: string };

/** Runs code in a fresh container that is always removed afterwards. */
export async function runCode(
  backend: SandboxBackend,
  config: Config["sandbox"],
  stationId: string,
  request: RunRequest,
): Promise<RunResult> {
  const { image, runtime } = chooseImage(config, request);
  const name = runtime ?? config.default_runtime;
  const interpreter = INTERPRETERS[name];
  if (!interpreter) {
    throw new StationError(
      "unknown_runtime",
      `compute mode cannot run code for runtime ${JSON.stringify(name)}`,
      {
        status: 400,
        hint: `runtimes with an interpreter: ${Object.keys(INTERPRETERS).join(", ")}`,
        exitCode: 2,
      },
    );
  }
  return await inThrowaway(backend, { stationId, image, kind: "run" }, async (containerId) => {
    const encoder = new TextEncoder();
    for (const [path, text] of Object.entries({ ...request.files, [interpreter.file]: request.code })) {
      const bytes = encoder.encode(text);
      if (bytes.length > config.max_file_size) {
        throw tooLarge(path, bytes.length, config.max_file_size);
      }
      await backend.writeFile(containerId, path, { data: bytes, size: bytes.length });
    }
    const result = await backend.exec(containerId, {
      cmd: [...interpreter.cmd, ...(request.args ?? [])],
      env: request.env,
      timeoutMs: request.timeout_ms ?? config.exec_timeout,
      maxOutputBytes: config.max_output_bytes,
      signal: request.signal,
      onOutput: request.onOutput,
    });
    return { ...result, runtime: name, image };
  });
}

/**
 * Runs `use` in a new networkless container of `image`, labelled as a one-shot `run` of this station (so
 * recovery removes it after a crash), and removes the container afterwards, whatever `use` did.
 */
export async function inThrowaway<T>(
  backend: SandboxBackend,
  what: { stationId: string; image: string; kind: string },
  use: (containerId: string) => Promise<T>,
): Promise<T> {
  await backend.ensureImage(what.image);
  const containerId = await backend.create({
    image: what.image,
    network: false,
    labels: {
      [LABELS.station]: what.stationId,
      [LABELS.session]: `${what.kind}_${ulid()}`,
      [LABELS.scope]: "run",
      [LABELS.createdAt]: new Date().toISOString(),
    },
  });
  try {
    return await use(containerId);
  } finally {
    await backend.destroy(containerId);
  }
}
