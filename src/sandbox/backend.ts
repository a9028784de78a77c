/** The sandbox backend interface (the Docker one implements it): containers, exec, files. */

import type { Readable } from "node:stream";

/** Which stream a chunk of exec output came from. */
export type OutputStream = "stdout" | "stderr";

/** What a new sandbox container looks like; the backend adds the security defaults. */
export interface ContainerSpec {
  image: string;
  network: boolean;
  labels: Record<string, string>;
  env?: Record<string, string>;
}

/** One command run inside a container. */
export interface ExecRequest {
  /** argv (run as is) or a shell string (run with /bin/sh -c). */
  cmd: string[] | string;
  /** Working directory, confined to /workspace (default /workspace). */
  cwd?: string;
  env?: Record<string, string>;
  timeoutMs: number;
  /** Cap for stdout and for stderr (each); the rest is dropped and flagged. */
  maxOutputBytes: number;
  /** Aborting kills the command inside the container. */
  signal?: AbortSignal;
  /** Receives output as it comes (before the cap is applied). */
  onOutput?: (stream: OutputStream, chunk: Uint8Array) => void;
}

/** The outcome of an exec; never silently truncated. */
export interface ExecResult {
  exit_code: number;
  /** The output as UTF-8 text (bytes that are not valid UTF-8 become U+FFFD). */
  stdout: string;
  stderr: string;
  /** The exact bytes, base64, present only when stdout is not valid UTF-8. */
  stdout_b64?: string;
  /** The exact bytes, base64, present only when stderr is not valid UTF-8. */
  stderr_b64?: string;
  /** True when either stream went over the cap. */
  truncated: boolean;
  stdout_truncated: boolean;
  stderr_truncated: boolean;
  timed_out: boolean;
  duration_ms: number;
}

/** One entry of a workspace listing. */
export interface FileEntry {
  /** Relative to the listed directory. */
  path: string;
  type: "file" | "dir" | "symlink" | "other";
  size: number;
  /** Permission bits in octal, e.g. "644". */
  mode: string;
  mtime: string;
}

/** A file coming out of a container: its size is known before the bytes are read. */
export interface FileRead {
  size: number;
  stream: Readable;
}

/** A managed container as found on the engine (for re-adoption and orphan removal). */
export interface ManagedContainer {
  id: string;
  labels: Record<string, string>;
  running: boolean;
}

/** What writeFile puts in a file: exactly `size` bytes of data, with permissions mode (0644 unless told). */
export interface FileContent {
  data: Readable | Uint8Array;
  size: number;
  mode?: number;
}

/**
 * The sandbox backend (containerized-sandbox PRD): every file operation goes through the engine's
 * API, never through a host path, so it works the same when stn itself runs in a container.
 */
export interface SandboxBackend {
  /**
   * Creates and starts a container with an empty /workspace owned by the sandbox user, its only place to
   * write besides /tmp (both size-capped, in memory); returns its id.
   */
  create(spec: ContainerSpec): Promise<string>;
  exec(containerId: string, request: ExecRequest): Promise<ExecResult>;
  /** Streams `size` bytes into a file (parents created, owned by the sandbox user). */
  writeFile(containerId: string, path: string, content: FileContent): Promise<void>;
  /** Opens a file for reading; refuses files larger than maxBytes before reading them. */
  readFile(containerId: string, path: string, maxBytes: number): Promise<FileRead>;
  list(containerId: string, path: string, recursive: boolean): Promise<FileEntry[]>;
  delete(containerId: string, path: string, recursive: boolean): Promise<void>;
  /** Removes the container (idempotent). */
  destroy(containerId: string): Promise<void>;
  /** Removes the volumes of managed containers (with all the labels) that are gone; returns their names. */
  removeOrphanVolumes(labels: Record<string, string>): Promise<string[]>;
  /** Managed containers carrying all the given labels. */
  listManaged(labels: Record<string, string>): Promise<ManagedContainer[]>;
  /** Makes the image available (present, or pulled); throws `image_unavailable` saying how to provide it. */
  ensureImage(image: string): Promise<void>;
  /** Lets go of what the backend holds open to containers (stn is stopping); containers stay. */
  close?(): Promise<void>;
}
