/** Writes the concurrency-key commands to the ledger (the shared writes of `db/concurrency_keys.ts`). */

import { acquireKeys, enqueueKeys, releaseKeys } from "../../db/concurrency_keys.ts";
import type { Statements } from "../../db/statements.ts";
import type { Command } from "./commands.ts";

type ConcurrencyCommand = Extract<
  Command,
  { kind: "enqueue_concurrency" | "acquire_concurrency" | "release_concurrency" }
>;

/** Applies one concurrency command (the caller holds the transaction); `freed` gets keys runs still wait for. */
export function applyConcurrency(sql: Statements, c: ConcurrencyCommand, freed?: string[]): void {
  switch (c.kind) {
    case "enqueue_concurrency":
      enqueueKeys(sql, c);
      break;
    case "acquire_concurrency":
      acquireKeys(sql, c.runId);
      break;
    case "release_concurrency":
      releaseKeys(sql, c.runId, freed);
      break;
  }
}
