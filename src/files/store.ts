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
  /** When the file stops being served and the reaper deletes it; null = never. */
  expires_at: string | null;
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
}

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

function expiresAt(obj: StoredObject): string | null {
  const v = header(obj, EXPIRES_HEADER);
  return v && !Number.isNaN(Date.parse(v)) ? new Date(v).toISOString() : null;
}

function isExpired(obj: StoredObject, now = Date.now()): boolean {
  const at = expiresAt(obj);
  return at !== null && Date.parse(at) <= now;
}

function toFileInfo(obj: StoredObject): FileInfo {
  return {
    key: keyOfObjectName(obj.name),
    size_bytes: obj.size,
    content_type: header(obj, TYPE_HEADER) ?? contentTypeFor(obj.description || obj.name),
    checksum: digestToChecksum(obj.digest) ?? "",
    created_at: new Date(obj.mtime).toISOString(),
    expires_at: expiresAt(obj),
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
  #reaper?: ReturnType<typeof setInterval>;
  #reaping?: Promise<number>;

  private constructor(settings: StorageSettings, obj: ObjectStore, js: JetStreamClient) {
    this.bucket = settings.bucket;
    this.settings = settings;
    this.#obj = obj;
    this.#js = js;
  }

  /** Opens (creating if needed) the bucket and keeps its byte limit equal to storage.max_total_bytes. */
  /** Opens (creating it if missing) the bucket; `replicas` changes its copies, undefined keeps them (1 when new). */
  static async open(nc: NatsConnection, settings: StorageSettings, replicas?: number): Promise<FileStore> {
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
    return new FileStore(settings, obj, js);
  }

  /** Bytes the bucket holds now (content plus the store's per-chunk overhead). */
  async usage(): Promise<number> {
    return (await this.#obj.status()).size;
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
    if (opts.size !== undefined && used + opts.size > maxTotal) {
      await body.cancel().catch(() => {});
      throw quotaExceeded(maxTotal, used);
    }
    const ttl = opts.ttlMs ?? this.settings.default_ttl;
    const hdrs = headers();
    hdrs.set(TYPE_HEADER, opts.contentType || contentTypeFor(opts.filename ?? key));
    if (ttl > 0) hdrs.set(EXPIRES_HEADER, new Date(Date.now() + ttl).toISOString());

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
      // ObjectInfo types its headers as MsgHdrs; StoredObject reads the fields that list and info both give.
      return toFileInfo(info as unknown as StoredObject);
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
    if (!obj || obj.deleted || isExpired(obj)) throw fileNotFound(key);
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
    return toFileInfo(await this.#stored(key));
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
    const info = toFileInfo(obj);
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
      .filter((o) => !isExpired(o, now))
      .map(toFileInfo)
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
    // list gives plain JSON of the same fields.
    const objs = await this.#obj.list() as unknown as StoredObject[];
    return objs.filter((o) => !o.deleted && !o.options?.link);
  }

  /** Deletes a file and its chunks; 404 when it does not exist (an expired file is purged, then 404). */
  async delete(key: string): Promise<void> {
    validateKey(key);
    const obj = await this.#obj.info(objectName(key)) as unknown as StoredObject | null;
    if (!obj || obj.deleted) throw fileNotFound(key);
    await this.#obj.delete(obj.name);
    if (isExpired(obj)) throw fileNotFound(key);
  }

  /** Deletes every expired file now; returns how many were removed. */
  reap(): Promise<number> {
    return this.#reaping ??= (async () => {
      try {
        const now = Date.now();
        let removed = 0;
        for (const obj of await this.#live()) {
          if (!isExpired(obj, now)) continue;
          await this.#obj.delete(obj.name);
          removed++;
        }
        if (removed > 0) log.info("removed expired files", { count: removed, bucket: this.bucket });
        return removed;
      } finally {
        this.#reaping = undefined;
      }
    })();
  }

  /** Runs reap() every intervalMs until stop(). */
  startReaper(intervalMs: number): void {
    this.#reaper ??= setInterval(() => {
      this.reap().catch((err) => log.warn("file reaper failed", { error: errorMessage(err) }));
    }, intervalMs);
  }

  /** Stops the reaper and waits for a sweep in progress. */
  async stop(): Promise<void> {
    if (this.#reaper !== undefined) clearInterval(this.#reaper);
    this.#reaper = undefined;
    await this.#reaping?.catch(() => {});
  }
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
