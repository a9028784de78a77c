import { z } from "zod";

/** GET /health: the health of each part and of the whole (503 when degraded). */
export const Health = z.looseObject({
  status: z.enum(["ok", "degraded"]),
  version: z.string(),
  uptime_s: z.number(),
  db: z.looseObject({
    status: z.enum(["ok", "down"]),
    schema_version: z.number().optional(),
    error: z.string().optional(),
  }),
  nats: z.looseObject({
    status: z.enum(["ok", "down"]),
    url: z.string().optional().describe(
      "where NATS listens; only for callers allowed on the rest of the API",
    ),
    managed: z.boolean(),
    bin: z.string().optional().describe("the managed nats-server binary in use"),
    rtt_ms: z.number().optional(),
    error: z.string().optional(),
  }),
  storage: z.looseObject({
    status: z.enum(["ok", "near_full", "unknown"]).describe(
      "near_full from storage.quota_warning of max_bytes on: uploads fail once it is full (not a 503)",
    ),
    used_bytes: z.number().optional(),
    max_bytes: z.number(),
    warning: z.string().optional(),
  }).optional(),
}).meta({ id: "Health" });
export type Health = z.infer<typeof Health>;

/** GET /api/v1/version */
export const Version = z.looseObject({ version: z.string(), deno: z.string() }).meta({ id: "Version" });
export type Version = z.infer<typeof Version>;
