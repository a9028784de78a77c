import { z } from "zod";

/** The request header that makes a run start idempotent (lowercase, as Hono's validator reads it). */
export const IDEMPOTENCY_KEY_HEADER = "idempotency-key";
/** The answer header that marks a replay: the run the key started before, nothing new started. */
export const REPLAYED_HEADER = "Idempotent-Replayed";

/** What an Idempotency-Key may be: 1-255 visible ASCII characters (a UUID, a CI job id, `nightly-2026-11-26`). */
export const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/** Headers of the routes that start runs. */
export const StartRunHeaders = z.object({
  [IDEMPOTENCY_KEY_HEADER]: z.string().regex(IDEMPOTENCY_KEY, "1-255 visible ASCII characters")
    .optional().describe(
      "makes the start idempotent for 24 h: a retry with the same key and body answers the run the first " +
        "try started (same status, `Idempotent-Replayed: true`), the same key with another body is 409 " +
        "`idempotency_key_reused`. Use a random token such as a UUID, one per start",
    ),
});

/** The answer headers of a run start. */
export const startedHeaders = {
  [REPLAYED_HEADER]: {
    description: "`true` when the Idempotency-Key already started this run: the answer is that run, " +
      "as it is now, and nothing new was started",
    schema: { type: "string" as const, enum: ["true"] },
  },
};
