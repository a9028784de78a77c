import { StationError } from "../errors.ts";
import { contentHash } from "../lib/canonical_json.ts";
import type { Database } from "./database.ts";

/**
 * Idempotency keys of run starts (migration 0015): the only code that reads or writes
 * `idempotency_keys`. A start that carries a key asks `find` first (a retry gets its run back without
 * any work), then `claim` inside the very transaction that creates the run, so concurrent starts with
 * one key create one run and a crash cannot separate a run from its key.
 */

/** How long a key names its first run (24 h); after that the key starts a new run. */
export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000;

/** What a key starts. */
export type StartKind = "workflow_run" | "agent_run";

/** A start that carries a key: the key, what it starts and the hash of the request. */
export interface KeyedStart {
  key: string;
  kind: StartKind;
  fingerprint: string;
}

/** A keyed start from a client's key (checked by the API contract) and the request it came with. */
export function keyedStart(key: string, kind: StartKind, request: unknown): KeyedStart {
  return { key, kind, fingerprint: contentHash({ kind, request }) };
}

interface KeyRow {
  kind: StartKind;
  fingerprint: string;
  run_id: string;
  created_ms: number;
}

/** Reads and writes of `idempotency_keys`; `now` is injectable for tests of expiry. */
export class IdempotencyKeys {
  #find: ReturnType<Database["prepare"]>;
  #prune: ReturnType<Database["prepare"]>;
  #insert: ReturnType<Database["prepare"]>;
  #now: () => number;

  constructor(db: Database, now: () => number = Date.now) {
    this.#find = db.prepare(
      "SELECT kind, fingerprint, run_id, created_ms FROM idempotency_keys WHERE key = ? AND created_ms >= ?",
    );
    this.#prune = db.prepare("DELETE FROM idempotency_keys WHERE created_ms < ?");
    this.#insert = db.prepare(
      "INSERT INTO idempotency_keys (key, kind, fingerprint, run_id, created_ms) VALUES (?, ?, ?, ?, ?)",
    );
    this.#now = now;
  }

  /** The id of the run this key started within 24 h; 409 `idempotency_key_reused` when that was another request. */
  find(start: KeyedStart): string | undefined {
    const row = this.#find.get(start.key, this.#now() - IDEMPOTENCY_TTL_MS) as KeyRow | undefined;
    if (!row) return undefined;
    if (row.fingerprint !== start.fingerprint) {
      const what = row.kind === "workflow_run" ? "workflow run" : "agent run";
      throw new StationError(
        "idempotency_key_reused",
        `the Idempotency-Key ${JSON.stringify(start.key)} started ${what} ${row.run_id} with another request`,
        {
          hint: "a retry must send the same body as the first try; use a new key for a new start",
          details: { run_id: row.run_id, kind: row.kind },
        },
      );
    }
    return row.run_id;
  }

  /**
   * Inside the transaction that creates run `runId`: the id of the run the key already started (then
   * nothing may be created), else records the key for `runId`. Expired keys are dropped on the way.
   */
  claim(start: KeyedStart, runId: string): string | undefined {
    const now = this.#now();
    this.#prune.run(now - IDEMPOTENCY_TTL_MS);
    const existing = this.find(start);
    if (existing) return existing;
    this.#insert.run(start.key, start.kind, start.fingerprint, runId, now);
    return undefined;
  }
}
