import { posix } from "node:path";
import { Readable } from "node:stream";
import type { ReadableStream as NodeReadableStream } from "node:stream/web";
import { StationError } from "../errors.ts";
import { resolveKey, validateKey } from "../files/keys.ts";
import type { FileInfo, FileStore, PutOptions } from "../files/store.ts";
import type { SandboxBackend } from "./backend.ts";
import type { SessionRecord } from "./ledger.ts";
import { relativeToWorkspace, workspacePath } from "./paths.ts";

/**
 * Streams a file from the file store into the workspace (up to the file store's size limit, not
 * sandbox.max_file_size: staging is how large inputs get in).
 */
export async function stageFile(
  { backend, files }: TransferEnds,
  session: SessionRecord,
  fileKey: string,
  destination: string,
): Promise<{ path: string; size_bytes: number }> {
  const target = workspacePath(destination);
  const { info, stream } = await files.get(resolveKey(fileKey));
  await backend.writeFile(session.container_id, target, {
    data: Readable.fromWeb(stream as NodeReadableStream<Uint8Array>),
    size: info.size_bytes,
  });
  return { path: target, size_bytes: info.size_bytes };
}

/** The two ends a transfer moves a file between: the sandbox backend and the file store. */
export interface TransferEnds {
  backend: SandboxBackend;
  files: FileStore;
}

/** Where publishFile stores a workspace file: its key, whether it may replace one, and its ttl (0 = never). */
export interface PublishOptions {
  key?: string;
  overwrite?: boolean;
  ttlMs?: number;
}

/** The key prefixes a session owns: sessions/<id>/ and, for a run's session, runs/<run>/output/. */
export function ownScopes(session: SessionRecord): string[] {
  return [`sessions/${session.id}/`, ...(session.run_id ? [`runs/${session.run_id}/output/`] : [])];
}

/**
 * Publish may create any new key, but replaces an existing one only inside the session's own scopes
 * and only when asked to (overwrite): a sandbox cannot clobber a user's upload or another run's
 * output. (A key created by someone else between this check and the store's write is not caught:
 * the object store has no create-only write.)
 */
export async function checkPublishTarget(
  files: FileStore,
  session: SessionRecord,
  key: string,
  overwrite: boolean,
): Promise<void> {
  const exists = await files.head(key).then(() => true, (err) => {
    if (err instanceof StationError && err.code === "file_not_found") return false;
    throw err;
  });
  if (!exists) return;
  const scopes = ownScopes(session);
  if (!scopes.some((prefix) => key.startsWith(prefix))) {
    throw new StationError(
      "publish_scope_denied",
      `${key} already exists and is outside this sandbox's scope (${scopes.join(", ")})`,
      {
        status: 403,
        hint:
          "publish to a new key, or under the sandbox's own scope; existing keys elsewhere are never replaced",
      },
    );
  }
  if (!overwrite) {
    throw new StationError("file_exists", `${key} already exists`, {
      status: 409,
      hint: "pass overwrite: true (CLI --overwrite) to replace it, or publish to another key",
    });
  }
}

/**
 * How long a published file lives unless the publish gave a ttl (0 pins it): under sessions/<id>/ it
 * goes with the session (storage.session_ttl after its close), under its run's runs/<run>/output/ it
 * lives storage.run_output_ttl, anywhere else storage.default_ttl like an upload.
 */
function lifetime(
  files: FileStore,
  session: SessionRecord,
  key: string,
  ttlMs: number | undefined,
): Pick<PutOptions, "ttlMs" | "expiresWithSession"> {
  if (ttlMs !== undefined) return { ttlMs };
  if (key.startsWith(`sessions/${session.id}/`)) return { ttlMs: 0, expiresWithSession: session.id };
  if (session.run_id && key.startsWith(`runs/${session.run_id}/output/`)) {
    return { ttlMs: files.settings.run_output_ttl };
  }
  return {};
}

/**
 * Streams a workspace file into the file store. The key defaults to runs/<run>/output/<name> for a
 * run's session, else sessions/<id>/<path>; see checkPublishTarget for which keys may be replaced and
 * lifetime for when the file expires (`ttlMs` overrides it; 0 = never).
 */
export async function publishFile(
  { backend, files }: TransferEnds,
  session: SessionRecord,
  path: string,
  { key, overwrite = false, ttlMs }: PublishOptions,
): Promise<FileInfo> {
  const source = workspacePath(path);
  const fileKey = validateKey(
    key ??
      (session.run_id
        ? `runs/${session.run_id}/output/${posix.basename(source)}`
        : `sessions/${session.id}/${relativeToWorkspace(source)}`),
  );
  await checkPublishTarget(files, session, fileKey, overwrite);
  const read = await backend.readFile(session.container_id, source, files.settings.max_file_size);
  try {
    return await files.put(fileKey, Readable.toWeb(read.stream) as ReadableStream<Uint8Array>, {
      size: read.size,
      filename: posix.basename(source),
      metadata: { sandbox_id: session.id, original_path: source },
      ...lifetime(files, session, fileKey, ttlMs),
    });
  } finally {
    // A put that failed before reading everything must not leave the reader in the container waiting.
    read.stream.destroy();
  }
}
