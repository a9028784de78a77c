import type { Migration } from "../migrate.ts";

/**
 * Idempotent starts and webhook replay protection (issue 27). `idempotency_keys` holds each
 * `Idempotency-Key` a run start carried, written in the transaction that creates the run, so a retry
 * finds the run and a crash cannot leave a run without its key (or a key without its run);
 * `fingerprint` is the hash of the request the key first came with. `webhook_deliveries` remembers each
 * webhook delivery by its delivery id and by the hash of its signature and body, written with the event
 * it became. Both are pruned lazily once older than their window.
 */
export default {
  version: 15,
  name: "idempotency",
  sql: `
    CREATE TABLE idempotency_keys (
      key TEXT PRIMARY KEY,
      kind TEXT NOT NULL CHECK (kind IN ('workflow_run', 'agent_run')),
      fingerprint TEXT NOT NULL,
      run_id TEXT NOT NULL,
      created_ms INTEGER NOT NULL
    );
    CREATE INDEX idempotency_keys_created ON idempotency_keys (created_ms);

    CREATE TABLE webhook_deliveries (
      hook TEXT NOT NULL,
      fingerprint TEXT NOT NULL,
      event_id TEXT NOT NULL,
      received_ms INTEGER NOT NULL,
      PRIMARY KEY (hook, fingerprint)
    );
    CREATE INDEX webhook_deliveries_received ON webhook_deliveries (received_ms);
  `,
} satisfies Migration;
