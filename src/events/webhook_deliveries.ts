import { createHash } from "node:crypto";
import type { Database } from "../db/database.ts";
import { Statements } from "../db/statements.ts";
import type { HookConfig } from "./webhooks.ts";

/**
 * Replay protection of webhooks (issue 27, migration 0015): the only code that reads or writes
 * `webhook_deliveries`. A delivery is remembered by its delivery id (the sender's header) and, for a
 * signed hook, by the hash of its signature and body — so a captured delivery sent again under a new
 * delivery id is still the same delivery. Checked and written in the transaction that records the
 * event the delivery became, so a crash cannot record one without the other.
 */

/** Headers that carry a sender's delivery id: GitHub, GitLab, Standard Webhooks, and a generic one. */
export const DELIVERY_HEADERS = ["x-github-delivery", "x-gitlab-event-uuid", "webhook-id", "x-delivery-id"];

/**
 * What a delivery is remembered by: `id:<delivery id>` when a delivery header is present, and for an
 * hmac-sha256 hook `sig:<sha256 of signature and body>`. (A bearer hook gets no body hash: its secret is
 * no signature of the body, and senders of such hooks often post the same body on purpose.)
 */
export function deliveryFingerprints(
  hook: HookConfig,
  headers: Record<string, string>,
  body: Uint8Array,
): string[] {
  const found: string[] = [];
  const id = DELIVERY_HEADERS.map((h) => headers[h]?.trim()).find((v) => v);
  if (id) found.push(`id:${id.slice(0, 200)}`);
  if (hook.signature === "hmac-sha256") {
    const signature = (headers["x-hub-signature-256"] ?? "").trim().toLowerCase();
    found.push(`sig:${createHash("sha256").update(signature).update("\n").update(body).digest("hex")}`);
  }
  return found;
}

/** Reads and writes of `webhook_deliveries`, over the engine's connection (inside its transaction). */
export class WebhookDeliveries {
  #q: Statements;
  #windowMs: number;

  constructor(db: Database, windowMs: number) {
    this.#q = new Statements(db);
    this.#windowMs = windowMs;
  }

  /**
   * Inside the transaction recording event `eventId`: the id of the (still recorded) event that a
   * delivery of `hook` with one of these fingerprints became within the window — a replay, to be
   * answered as a duplicate — else remembers the fingerprints for `eventId`. Old rows are dropped here.
   */
  claim(hook: string, fingerprints: string[], eventId: string, nowMs: number): string | undefined {
    const since = nowMs - this.#windowMs;
    this.#q.run("DELETE FROM webhook_deliveries WHERE received_ms < ?", since);
    for (const fp of fingerprints) {
      const seen = this.#q.get<{ event_id: string }>(
        `SELECT d.event_id FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
         WHERE d.hook = ? AND d.fingerprint = ? AND d.received_ms >= ?`,
        hook,
        fp,
        since,
      );
      if (seen) return seen.event_id;
    }
    for (const fp of fingerprints) {
      this.#q.run(
        `INSERT INTO webhook_deliveries (hook, fingerprint, event_id, received_ms) VALUES (?, ?, ?, ?)
         ON CONFLICT (hook, fingerprint) DO UPDATE SET event_id = excluded.event_id, received_ms = excluded.received_ms`,
        hook,
        fp,
        eventId,
        nowMs,
      );
    }
    return undefined;
  }
}
