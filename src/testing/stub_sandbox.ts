/**
 * The sandbox backend of `sandbox: mock` test cases: containers that exist only in memory, whose commands
 * do not run (exit 0, no output) and whose /workspace is a map of files, for machines without Docker.
 */

import { Readable } from "node:stream";
import type {
  ExecRequest,
  ExecResult,
  FileContent,
  FileEntry,
  FileRead,
  ManagedContainer,
  SandboxBackend,
} from "../sandbox/backend.ts";
import { StationError } from "../errors.ts";

interface StubContainer {
  labels: Record<string, string>;
  files: Map<string, Uint8Array>;
}

/** Reads a stream or bytes whole. */
async function bytesOf(data: Readable | Uint8Array): Promise<Uint8Array> {
  if (data instanceof Uint8Array) return data;
  const chunks: Uint8Array[] = [];
  for await (const c of data) chunks.push(typeof c === "string" ? new TextEncoder().encode(c) : c);
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) out.set(c, at), at += c.length;
  return out;
}

/** A workspace path as a key: relative to /workspace, no leading or trailing slash. */
const key = (path: string) => path.replace(/^\/workspace\/?/, "").replace(/^\/+|\/+$/g, "");

/** Containers in memory; every exec answers exit 0 with empty output, as `sandbox: mock` promises. */
export class StubSandboxBackend implements SandboxBackend {
  #containers = new Map<string, StubContainer>();
  #next = 0;

  create(spec: { labels: Record<string, string> }): Promise<string> {
    const id = `stub-${++this.#next}`;
    this.#containers.set(id, { labels: spec.labels, files: new Map() });
    return Promise.resolve(id);
  }

  exec(containerId: string, _request: ExecRequest): Promise<ExecResult> {
    this.#get(containerId);
    return Promise.resolve({
      exit_code: 0,
      stdout: "",
      stderr: "",
      truncated: false,
      stdout_truncated: false,
      stderr_truncated: false,
      timed_out: false,
      duration_ms: 0,
    });
  }

  async writeFile(containerId: string, path: string, content: FileContent): Promise<void> {
    this.#get(containerId).files.set(key(path), await bytesOf(content.data));
  }

  readFile(containerId: string, path: string, maxBytes: number): Promise<FileRead> {
    const bytes = this.#get(containerId).files.get(key(path));
    if (!bytes) {
      return Promise.reject(
        new StationError("file_not_found", `no file ${path} in the sandbox`, { status: 404 }),
      );
    }
    if (bytes.length > maxBytes) {
      return Promise.reject(
        new StationError("file_too_large", `${path} is over ${maxBytes} bytes`, { status: 413 }),
      );
    }
    return Promise.resolve({ size: bytes.length, stream: Readable.from([bytes]) });
  }

  list(containerId: string, path: string, recursive: boolean): Promise<FileEntry[]> {
    const dir = key(path);
    const prefix = dir ? `${dir}/` : "";
    const entries = [...this.#get(containerId).files].filter(([p]) => p.startsWith(prefix))
      .map(([p, b]) => ({ path: p.slice(prefix.length), b }))
      .filter(({ path }) => recursive || !path.includes("/"))
      .map(({ path, b }) => ({
        path,
        type: "file" as const,
        size: b.length,
        mode: "644",
        mtime: new Date(0).toISOString(),
      }));
    return Promise.resolve(entries);
  }

  delete(containerId: string, path: string, recursive: boolean): Promise<void> {
    const files = this.#get(containerId).files;
    const k = key(path);
    for (const p of [...files.keys()]) if (p === k || (recursive && p.startsWith(`${k}/`))) files.delete(p);
    return Promise.resolve();
  }

  destroy(containerId: string): Promise<void> {
    this.#containers.delete(containerId);
    return Promise.resolve();
  }

  ensureRunning(containerId: string): Promise<void> {
    this.#get(containerId);
    return Promise.resolve();
  }

  /** A stub sandbox has no volumes. */
  removeOrphanVolumes(_labels: Record<string, string>): Promise<string[]> {
    return Promise.resolve([]);
  }

  listManaged(labels: Record<string, string>): Promise<ManagedContainer[]> {
    return Promise.resolve(
      [...this.#containers].filter(([, c]) => Object.entries(labels).every(([k, v]) => c.labels[k] === v))
        .map(([id, c]) => ({ id, labels: c.labels, running: true })),
    );
  }

  ensureImage(): Promise<void> {
    return Promise.resolve();
  }

  #get(id: string): StubContainer {
    const c = this.#containers.get(id);
    if (!c) throw new StationError("sandbox_not_found", `no stub container ${id}`, { status: 404 });
    return c;
  }
}
