import type { Migration } from "../migrate.ts";

/**
 * Model calls under `ai.limits` across machines (issue 33, docs/configuration.md#flow-control). `model_calls`:
 * one row per call and limit key, from the caller's first ask (its reserved request slot) through its send
 * (`sent_ms`) to its end (`done_ms`, the `tokens` it used): calls in flight count against `concurrency`, the
 * trailing minute's tokens against `tokens_per_minute`, whichever machine made them. A waiting or in-flight
 * call holds its row while its caller renews `lease_ms`; one whose caller died (a killed worker) lapses. The
 * token debt clock `model_limits.tokens_ms` gives way to `last_tokens`, the usage a call is counted at before
 * it reports its own.
 */
export default {
  version: 30,
  name: "model_calls",
  sql: `
    CREATE TABLE model_calls (
      id TEXT NOT NULL,
      key TEXT NOT NULL,
      slot_ms INTEGER NOT NULL,
      sent_ms INTEGER,
      done_ms INTEGER,
      tokens INTEGER,
      lease_ms INTEGER NOT NULL,
      PRIMARY KEY (key, id)
    );
    ALTER TABLE model_limits DROP COLUMN tokens_ms;
    ALTER TABLE model_limits ADD COLUMN last_tokens INTEGER NOT NULL DEFAULT 0;
  `,
} satisfies Migration;
