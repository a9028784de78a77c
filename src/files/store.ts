/**
 * FileStore: files in a JetStream object store bucket, streamed in and out, with size, quota and expiry
 * rules.
 */

import { jetstream, type JetStreamClient } from "@nats-io/jetstream";
import { type ObjectInfo, type ObjectStore, Objm, setSha256Backend, StorageType } from "@nats-io/obj";
import { headers, type NatsConnection } from "@nats-io/transport-node";
import type { Config } from "../config/schema.ts";
import { errorMessage, StationError } from "../errors.ts";
import { log } from "../log.ts";
import { traceMethods } from "../telemetry/tracing.ts";
import { youngGcEvery } from "../lib/young_gc.ts";
import { digestToChecksum } from "./checksum.ts";
import { chunkStream } from "./chunks.ts";
import { latestEntries } from "./listing.ts";
import { contentTypeFor } from "./content_type.ts";
import { keyOfObjectName, objectName, validateKey } from "./keys.ts";
import { formatBytes } from "./size.ts";

/** The `storage` section of config.yaml. */
export type StorageSettings = Config["storage"];

/** What stn knows about a stored file; the JSON shape of list, info and HEAD. */
export interface FileInfo {
  key: string;
  size_bytes: number;
  content_type: string;
  /** `sha256:<hex>` of the content. */
  checksum: string;
  created_at: string;
  /** When the file stops being served and the reaper deletes it; null = never (or not yet known). */
  expires_at: string | null;
  /** The sandbox session this file goes with: it expires storage.session_ttl after that session closes. */
  expires_with_session: string | null;
  /** The uploaded file's name, when there was one. */
  filename: string | null;
  metadata: Record<string, string>;
}

export interface PutOptions {
  contentType?: string;
  /** Time to live in ms; undefined = storage.default_ttl, 0 = never expires. */
  ttlMs?: number;
  metadata?: Record<string, string>;
  /** Original file name (kept as the object's description, used for the content type when none is given). */
  filename?: string;
  /** Size announced by the sender, checked against the limits before a byte is stored. */
  size?: number;
  /** A sandbox session whose close starts the file's storage.session_ttl (the file has no ttl of its own). */
  expiresWithSession?: string;
}

/** When a sandbox session closed (ms since the epoch); null while it is open or when unknown. */
export type SessionClosedAt = (sessionId: string) => number | null;

export interface ListOptions {
  prefix?: string;
  limit?: number;
  /** The next_cursor of the previous page. */
  cursor?: string;
}

export interface FileList {
  files: FileInfo[];
  /** Pass as cursor to get the next page; null on the last page. */
  next_cursor: string | null;
}

const EXPIRES_HEADER = "X-Expires-At";
const SESSION_HEADER = "X-Expires-With-Session";
const TYPE_HEADER = "Content-Type";

/** A stored object as the object store reports it (list gives plain JSON, info gives an object with MsgHdrs). */
type StoredObject = Pick<ObjectInfo, "name" | "size" | "digest" | "mtime" | "description" | "metadata"> & {
  nuid: string;
  chunks: number;
  deleted?: boolean;
  options?: ObjectInfo["options"];
  headers?: unknown;
};

function header(obj: StoredObject, name: string): string | undefined {
  const h = obj.headers as { get?: (k: string) => string } | Record<string, string[]> | undefined;
  if (!h) return undefined;
  if (typeof h.get === "function") return h.get(name) || undefined;
  const record = h as Record<string, string[]>;
  const found = Object.keys(record).find((k) => k.toLowerCase() === name.toLowerCase());
  return found ? record[found]?.[0] : undefined;
}

/** Reads a stored object's expiry: its own date, or its session's close plus the grace period. */
type Expiry = (obj: StoredObject) => string | null;

function toFileInfo(obj: StoredObject, expiry: Expiry): FileInfo {
  return {
    key: keyOfObjectName(obj.name),
    size_bytes: obj.size,
    content_type: header(obj, TYPE_HEADER) ?? contentTypeFor(obj.description || obj.name),
    checksum: digestToChecksum(obj.digest) ?? "",
    created_at: new Date(obj.mtime).toISOString(),
    expires_at: expiry(obj),
    expires_with_session: header(obj, SESSION_HEADER) ?? null,
    filename: obj.description || null,
    metadata: { ...(obj.metadata ?? {}) },
  };
}

/** 404 file_not_found for a key. */
export function fileNotFound(key: string): StationError {
  return new StationError("file_not_found", `file not found: ${key}`, {
    status: 404,
    hint: "list what is stored with `stn files list` (expired files are gone)",
  });
}

/** Files in a JetStream object store bucket: streamed put/get with size, quota and TTL rules. */
export class FileStore {
  readonly bucket: string;
  readonly settings: StorageSettings;
  #obj: ObjectStore;
  #js: JetStreamClient;
  #sessionClosedAt: SessionClosedAt;
  #quotaWarned = false;

  private constructor(
    settings: StorageSettings,
    obj: ObjectStore,
    js: JetStreamClient,
    sessionClosedAt: SessionClosedAt,
  ) {
    this.bucket = settings.bucket;
    this.settings = settings;
    this.#obj = obj;
    this.#js = js;
    this.#sessionClosedAt = sessionClosedAt;
  }

  /**
   * Opens (creating it if missing) the bucket, its byte limit kept equal to storage.max_total_bytes;
   * `replicas` changes its copies, undefined keeps them (1 when new). `sessionClosedAt` tells when a
   * session closed, for files that go with their session (none without it).
   */
  static async open(
    nc: NatsConnection,
    settings: StorageSettings,
    replicas?: number,
    sessionClosedAt: SessionClosedAt = () => null,
  ): Promise<FileStore> {
    // The store's default digest is pure-JS SHA-256, which caps a put at about 85 MB/s; node:crypto's runs
    // about 3x faster. The choice is process-wide and must precede the first put.
    setSha256Backend("native");
    const js = jetstream(nc);
    const obj = await new Objm(js).create(settings.bucket, {
      description: "File staging for sandbox operations",
      storage: StorageType.File,
      max_bytes: settings.max_total_bytes,
      replicas: replicas ?? 1,
    });
    // The bucket may predate a changed limit; the stream's own limit is the backstop for racing uploads.
    const jsm = await js.jetstreamManager();
    const stream = `OBJ_${settings.bucket}`;
    const si = await jsm.streams.info(stream);
    if (si.config.max_bytes !== settings.max_total_bytes || si.config.num_replicas !== replicas) {
      await jsm.streams.update(stream, {
        ...si.config,
        max_bytes: settings.max_total_bytes,
        num_replicas: replicas,
      });
    }
    return new FileStore(settings, obj, js, sessionClosedAt);
  }

  /** Bytes the bucket holds now (content plus the store's per-chunk overhead). */
  async usage(): Promise<number> {
    return (await this.#obj.status()).size;
  }

  /**
   * How full the bucket is; `near_full` from storage.quota_warning of storage.max_total_bytes on. The
   * first time it is seen near full (again) a warning is logged, before uploads start failing.
   */
  async quota(used?: number): Promise<Quota> {
    const max_bytes = this.settings.max_total_bytes;
    const used_bytes = used ?? await this.usage();
    const near_full = used_bytes >= max_bytes * this.settings.quota_warning;
    if (near_full && !this.#quotaWarned) {
      const [used, max] = [formatBytes(used_bytes), formatBytes(max_bytes)];
      log.warn("the file store is nearly full; uploads fail once it is (stn files prune)", { used, max });
    }
    this.#quotaWarned = near_full;
    return { used_bytes, max_bytes, near_full };
  }

  /** A stored object's expiry: its X-Expires-At, or its session's close plus storage.session_ttl. */
  #expiry = (obj: StoredObject): string | null => {
    const own = header(obj, EXPIRES_HEADER);
    if (own && !Number.isNaN(Date.parse(own))) return new Date(own).toISOString();
    const session = header(obj, SESSION_HEADER);
    const closed = session ? this.#sessionClosedAt(session) : null;
    return closed === null ? null : new Date(closed + this.settings.session_ttl).toISOString();
  };

  #isExpired(obj: StoredObject, now = Date.now()): boolean {
    const at = this.#expiry(obj);
    return at !== null && Date.parse(at) <= now;
  }

  /**
   * Stores body under key, streaming: size and quota are enforced while the bytes flow, and a rejected
   * or failed upload leaves nothing behind (a previous file under the same key stays intact).
   */
  async put(key: string, body: ReadableStream<Uint8Array>, opts: PutOptions = {}): Promise<FileInfo> {
    validateKey(key);
    const { max_file_size: maxSize, max_total_bytes: maxTotal } = this.settings;
    if (opts.size !== undefined && opts.size > maxSize) {
      await body.cancel().catch(() => {});
      throw tooLarge(maxSize);
    }
    const used = await this.usage();
    await this.quota(used);
    if (opts.size !== undefined && used + opts.size > maxTotal) {
      await body.cancel().catch(() => {});
      throw quotaExceeded(maxTotal, used);
    }
    const ttl = opts.ttlMs ?? this.settings.default_ttl;
    const hdrs = headers();
    hdrs.set(TYPE_HEADER, opts.contentType || contentTypeFor(opts.filename ?? key));
    if (ttl > 0) hdrs.set(EXPIRES_HEADER, new Date(Date.now() + ttl).toISOString());
    if (opts.expiresWithSession) hdrs.set(SESSION_HEADER, opts.expiresWithSession);

    let seen = 0;
    const collect = youngGcEvery();
    const metered = body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          seen += chunk.length;
          collect(chunk.length);
          if (seen > maxSize) controller.error(tooLarge(maxSize));
          else if (used + seen > maxTotal) controller.error(quotaExceeded(maxTotal, used));
          else controller.enqueue(chunk);
        },
      }),
    );
    try {
      const info = await this.#obj.put({
        name: objectName(key),
        description: opts.filename ?? "",
        headers: hdrs,
        metadata: opts.metadata ?? {},
      }, metered);
      return toFileInfo(info as unknown as StoredObject, this.#expiry);
    } catch (err) {
      if (err instanceof StationError) throw err;
      if (/maximum bytes|resource limits|insufficient resources/i.test(errorMessage(err))) {
        throw quotaExceeded(maxTotal, used);
      }
      throw err;
    }
  }

  async #stored(key: string): Promise<StoredObject> {
    validateKey(key);
    // as above: info's answer read as a StoredObject.
    const obj = await this.#obj.info(objectName(key)) as unknown as StoredObject | null;
    if (!obj || obj.deleted || this.#isExpired(obj)) throw fileNotFound(key);
    if (obj.options?.link) {
      throw new StationError(
        "unsupported_object",
        `${key} is an object store link, which stn does not follow`,
        {
          status: 400,
        },
      );
    }
    return obj;
  }

  /** Metadata of a live file; 404 when missing or expired. */
  async head(key: string): Promise<FileInfo> {
    return toFileInfo(await this.#stored(key), this.#expiry);
  }

  /**
   * A live file's metadata and a bounded-memory stream of its bytes (or of one inclusive byte range). A whole
   * file's bytes are checked against its checksum as they stream, unless `clientVerifies` says the reader
   * checks the same checksum itself (`stn files download` does), which spares the server a SHA-256 pass.
   */
  async get(
    key: string,
    range?: { start: number; end: number },
    opts: { clientVerifies?: boolean } = {},
  ): Promise<{ info: FileInfo; stream: ReadableStream<Uint8Array> }> {
    const obj = await this.#stored(key);
    const info = toFileInfo(obj, this.#expiry);
    const stream = chunkStream({
      js: this.#js,
      stream: `OBJ_${this.bucket}`,
      subject: `$O.${this.bucket}.C.${obj.nuid}`,
      chunks: obj.chunks,
      checksum: opts.clientVerifies ? null : info.checksum || null,
      range,
    });
    return { info, stream };
  }

  /** Live files whose key starts with prefix, sorted by key, one page at a time. */
  async list(opts: ListOptions = {}): Promise<FileList> {
    const limit = opts.limit ?? 1000;
    const now = Date.now();
    const all = (await this.#live())
      .filter((o) => !this.#isExpired(o, now))
      .map((o) => toFileInfo(o, this.#expiry))
      .filter((f) => f.key.startsWith(opts.prefix ?? ""))
      .filter((f) => opts.cursor === undefined || f.key > opts.cursor)
      .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    const page = all.slice(0, limit);
    return {
      files: page,
      next_cursor: all.length > limit ? page[page.length - 1].key : null,
    };
  }

  async #live(): Promise<StoredObject[]> {
    const objs = await latestEntries<StoredObject>(this.#js, this.bucket);
    return objs.filter((o) => !o.deleted && !o.options?.link);
  }

  /** Deletes a file and its chunks; 404 when it does not exist (an expired file is purged, then 404). */
  async delete(key: string): Promise<void> {
    validateKey(key);
    const obj = await this.#obj.info(objectName(key)) as unknown as StoredObject | null;
    if (!obj || obj.deleted) throw fileNotFound(key);
    await this.#obj.delete(obj.name);
    if (this.#isExpired(obj)) throw fileNotFound(key);
  }

  /** Every file past its expiry (not served any more, not deleted yet), sorted by key. */
  async expired(now = Date.now()): Promise<FileInfo[]> {
    return (await this.#live())
      .filter((o) => this.#isExpired(o, now))
      .map((o) => toFileInfo(o, this.#expiry))
      .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  /** Deletes an expired file; false when it is gone already or no longer expired (re-uploaded since). */
  async purgeExpired(key: string, now = Date.now()): Promise<boolean> {
    const obj = await this.#obj.info(objectName(key)) as unknown as StoredObject | null;
    if (!obj || obj.deleted || !this.#isExpired(obj, now)) return false;
    await this.#obj.delete(obj.name);
    return true;
  }
}

/** How full the bucket is (GET /health's `storage`). */
export interface Quota {
  used_bytes: number;
  max_bytes: number;
  /** At or past storage.quota_warning of max_bytes. */
  near_full: boolean;
}

// Uploads span the whole transfer; a download's span covers finding the file (its bytes stream after).
traceMethods(FileStore, "files", "stn.file.key", ["put", "get", "delete"]);

function tooLarge(max: number): StationError {
  return new StationError("file_too_large", `file exceeds the maximum size of ${formatBytes(max)}`, {
    status: 413,
    hint: "raise storage.max_file_size (STN_STORAGE_MAX_FILE_SIZE) on the server, or split the file",
  });
}

function quotaExceeded(max: number, used: number): StationError {
  return new StationError(
    "storage_quota_exceeded",
    `storage quota exceeded: the bucket holds ${formatBytes(used)} of ${formatBytes(max)}`,
    {
      status: 507,
      hint:
        "delete files you no longer need (stn files list / stn files delete), or raise storage.max_total_bytes",
    },
  );
}

/** The answer to an upload (POST or PUT /api/v1/files). */
export interface UploadResult {
  file_key: string;
  size_bytes: number;
  content_type: string;
  checksum: string;
  expires_at: string | null;
}

/** The upload answer for a stored file. */
export function uploadResult(info: FileInfo): UploadResult {
  const { key, size_bytes, content_type, checksum, expires_at } = info;
  return { file_key: key, size_bytes, content_type, checksum, expires_at };
}
