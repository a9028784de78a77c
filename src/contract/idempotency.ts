import { z } from "zod";
import { IDEMPOTENCY_KEY, IDEMPOTENCY_KEY_HEADER, REPLAYED_HEADER } from "./headers.ts";

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
