/** Calls of /api/v1/sandboxes and /api/v1/sandbox/run. */

import { Buffer } from "node:buffer";
import type { z } from "zod";
import * as errorsAnswers from "./answers/errors.ts";
import type {
  ExecResult,
  FileEntry,
  OpenResult,
  PublishBody,
  PublishedFile,
  RunResult,
  Sandbox,
  StagedFile,
  WrittenFile,
} from "../contract/sandboxes.ts";
import * as sandboxesAnswers from "./answers/sandboxes.ts";
import { fromErrorBody, StationError } from "../errors.ts";
import { parseAnswer, type StationClient } from "./http.ts";
import { sseMessages } from "./sse.ts";

const base = (id: string) => `/api/v1/sandboxes/${encodeURIComponent(id)}`;
/**
 * …/files/<path>, each segment encoded. What URLs would rewrite reaches the server as written, so it
 * answers for the path the user gave (400 path_outside_workspace) rather than for another: an absolute
 * path keeps its leading "/" as %2F instead of being made relative, and a path with a `.` or `..`
 * segment (which URL parsing collapses, even as %2E) is sent as one segment, its "/" as %2F.
 */
function filesPath(id: string, path: string): string {
  const segments = path.replace(/^\/+/, "").split("/");
  const rest = segments.some((s) => s === "." || s === "..")
    ? encodeURIComponent(segments.join("/"))
    : segments.map(encodeURIComponent).join("/");
  return `${base(id)}/files/${path.startsWith("/") ? "%2F" : ""}${rest}`;
}

export type { OpenResult };

/** POST /api/v1/sandboxes */
export function openSandbox(client: StationClient, body: Record<string, unknown>): Promise<OpenResult> {
  return client.json("POST", "/api/v1/sandboxes", {
    body,
    signal: AbortSignal.timeout(10 * 60_000),
    answer: sandboxesAnswers.OpenResult,
  });
}

/** GET /api/v1/sandboxes */
export async function listSandboxes(client: StationClient, all = false): Promise<Sandbox[]> {
  return (await client.json("GET", "/api/v1/sandboxes", {
    query: { all },
    answer: sandboxesAnswers.SandboxList,
  })).sandboxes;
}

/** DELETE /api/v1/sandboxes/:id */
export function closeSandbox(client: StationClient, id: string): Promise<Sandbox> {
  return client.json("DELETE", base(id), { answer: sandboxesAnswers.Sandbox });
}

/** The exact bytes of exec output: its base64 form when it was not UTF-8, else the text. */
export function outputBytes(text: string, b64: string | undefined): Uint8Array {
  return b64 === undefined ? new TextEncoder().encode(text) : Buffer.from(b64, "base64");
}

/** One event of a streamed exec: output as text and as its exact bytes. */
export type ExecEvent =
  | { type: "stdout" | "stderr"; data: string; bytes: Uint8Array }
  | { type: "result"; result: ExecResult };

/** How a streamed exec reports: onEvent for each event; signal aborts it. */
export interface ExecStreamOptions {
  onEvent: (e: ExecEvent) => void;
  signal?: AbortSignal;
}

/** POST …/exec?stream=1: calls onEvent for output as it comes; resolves with the result. */
export async function execStreaming(
  client: StationClient,
  id: string,
  body: Record<string, unknown>,
  { onEvent, signal }: ExecStreamOptions,
): Promise<ExecResult> {
  const res = await client.fetch("POST", `${base(id)}/exec`, {
    query: { stream: 1 },
    body: JSON.stringify(body),
    headers: { "content-type": "application/json" },
    signal,
  });
  const what = `POST ${base(id)}/exec`;
  for await (const message of await sseMessages(res.body!)) {
    const data = JSON.parse(message.data);
    if (message.event === "stdout" || message.event === "stderr") {
      const chunk = parseAnswer(sandboxesAnswers.OutputChunk, data, what);
      onEvent({ type: message.event, data: chunk.data, bytes: outputBytes(chunk.data, chunk.data_b64) });
    } else if (message.event === "result") {
      const result = parseAnswer(sandboxesAnswers.ExecResult, data, what);
      onEvent({ type: "result", result });
      return result;
    } else if (message.event === "error") {
      throw fromErrorBody(500, parseAnswer(errorsAnswers.ErrorBody, data, what));
    }
  }
  throw new StationError("stream_ended", "the exec stream ended without a result", {
    hint: "the server may have stopped; check `stn status`",
  });
}

/** PUT …/files/<path> */
export async function writeSandboxFile(
  client: StationClient,
  id: string,
  path: string,
  bytes: Uint8Array,
): Promise<z.infer<typeof WrittenFile>> {
  const res = await client.fetch("PUT", filesPath(id, path), {
    body: bytes as BodyInit,
    headers: { "content-type": "application/octet-stream" },
  });
  return parseAnswer(sandboxesAnswers.WrittenFile, await res.json(), `PUT ${filesPath(id, path)}`);
}

/** GET …/files/<path>: the response streams the bytes. */
export function readSandboxFile(client: StationClient, id: string, path: string): Promise<Response> {
  return client.fetch("GET", filesPath(id, path));
}

/** GET …/files?path=&recursive= */
export async function listSandboxFiles(
  client: StationClient,
  id: string,
  path: string | undefined,
  recursive: boolean,
): Promise<FileEntry[]> {
  return (await client.json("GET", `${base(id)}/files`, {
    query: { path, recursive },
    answer: sandboxesAnswers.FileEntryList,
  }))
    .entries;
}

/** DELETE …/files/<path> */
export async function deleteSandboxFile(client: StationClient, id: string, path: string, recursive: boolean) {
  await client.json("DELETE", filesPath(id, path), {
    query: { recursive },
    answer: sandboxesAnswers.DeletedPath,
  });
}

/** POST …/stage */
export function stageFile(
  client: StationClient,
  id: string,
  fileKey: string,
  destination: string,
): Promise<StagedFile> {
  return client.json("POST", `${base(id)}/stage`, {
    body: { file_key: fileKey, destination },
    signal: AbortSignal.timeout(30 * 60_000),
    answer: sandboxesAnswers.StagedFile,
  });
}

/** The publish body beside its source: file_key, overwrite, ttl. */
export type PublishOptions = Omit<z.infer<typeof PublishBody>, "source">;

/** POST …/publish */
export function publishFile(
  client: StationClient,
  id: string,
  source: string,
  { file_key, overwrite, ttl }: PublishOptions = {},
): Promise<PublishedFile> {
  return client.json("POST", `${base(id)}/publish`, {
    body: { source, file_key, overwrite, ttl },
    signal: AbortSignal.timeout(30 * 60_000),
    answer: sandboxesAnswers.PublishedFile,
  });
}

/** POST /api/v1/sandbox/run */
export function runCode(client: StationClient, body: Record<string, unknown>): Promise<RunResult> {
  return client.json("POST", "/api/v1/sandbox/run", {
    body,
    signal: AbortSignal.timeout(24 * 3_600_000),
    answer: sandboxesAnswers.RunResult,
  });
}
