import { createHmac } from "node:crypto";
import type { Config } from "../config/schema.ts";
import { EVENT_NAME } from "../contract/events.ts";
import { errorMessage, StationError } from "../errors.ts";
import { secretEqual } from "../lib/secret_equal.ts";
import type { IncomingEvent } from "../workflows/events.ts";
import { checkTemplates, evaluate, parseCheck, renderString } from "../workflows/expr.ts";

/**
 * Signed webhooks (issue 20): `POST /api/v1/hooks/<name>` turns a CI system's or SaaS tool's
 * request into an event. The hook's secret proves the sender — an HMAC-SHA256 of the raw body in
 * `X-Hub-Signature-256: sha256=<hex>` (GitHub's scheme), or `Authorization: Bearer <secret>` —
 * compared in constant time; nothing is recorded for a request that fails it.
 */

/** One configured hook (`events.hooks.<name>`). */
export type HookConfig = Config["events"]["hooks"][string];

const invalid = (message: string) =>
  new StationError("invalid_signature", message, {
    status: 401,
    hint: "sign the raw body with the hook's secret: X-Hub-Signature-256: sha256=<hex HMAC-SHA256> " +
      "(or Authorization: Bearer <secret> for signature: bearer)",
  });

/** Checks the request's signature against the hook's secret; throws 401 `invalid_signature` when it fails. */
export function verifyHook(hook: HookConfig, headers: Record<string, string>, body: Uint8Array): void {
  if (hook.signature === "bearer") {
    const presented = /^Bearer\s+(.+)$/i.exec(headers["authorization"] ?? "")?.[1].trim();
    if (presented === undefined) throw invalid("the webhook has no Authorization: Bearer secret");
    if (!secretEqual(presented, hook.secret)) throw invalid("the webhook's bearer secret is wrong");
    return;
  }
  const presented = headers["x-hub-signature-256"];
  if (!presented) throw invalid("the webhook has no X-Hub-Signature-256 header");
  const expected = `sha256=${createHmac("sha256", hook.secret).update(body).digest("hex")}`;
  if (!secretEqual(presented.trim().toLowerCase(), expected)) {
    throw invalid("the webhook's signature does not match its body");
  }
}

const badPayload = (message: string) =>
  new StationError("hook_payload_invalid", message, {
    status: 400,
    hint: "the body must be JSON; the hook's event, data and id mappings run over it (docs/events.md)",
  });

/** The event a verified webhook request stands for: its name, data and id mapped from the body. */
export async function hookEvent(
  name: string,
  hook: HookConfig,
  headers: Record<string, string>,
  body: Uint8Array,
): Promise<IncomingEvent> {
  let payload: unknown = {};
  const text = new TextDecoder().decode(body).trim();
  try {
    if (text) payload = JSON.parse(text);
  } catch (err) {
    throw badPayload(`the webhook body is not JSON: ${errorMessage(err)}`);
  }
  const bindings = { headers };
  try {
    const event = String(await renderString(hook.event, { data: payload, bindings }));
    if (!EVENT_NAME.test(event) || event.length > 200) {
      throw badPayload(
        `the hook's event name came out as ${JSON.stringify(event)}, which is not an event name`,
      );
    }
    const data = hook.data ? await evaluate(hook.data, payload, bindings) : payload;
    const id = hook.id ? await evaluate(hook.id, payload, bindings) : undefined;
    return {
      name: event,
      data: data ?? null,
      id: id === undefined || id === null || id === "" ? undefined : String(id).slice(0, 200),
      source: `hook:${name}`,
    };
  } catch (err) {
    if (err instanceof StationError && err.code === "hook_payload_invalid") throw err;
    throw badPayload(`webhook ${name}: ${errorMessage(err)}`);
  }
}

/** The problems of the configured hooks' mappings (`event` templates, `data` and `id` JSONata), as config errors. */
export function hookProblems(hooks: Config["events"]["hooks"]): string[] {
  const found: string[] = [];
  for (const [name, hook] of Object.entries(hooks)) {
    for (const p of checkTemplates(hook.event)) {
      found.push(
        `events.hooks.${name}.event: template does not parse at position ${p.position}: ${p.message}`,
      );
    }
    for (const key of ["data", "id"] as const) {
      const p = hook[key] === undefined ? null : parseCheck(hook[key]!);
      if (p) {
        found.push(
          `events.hooks.${name}.${key}: JSONata does not parse at position ${p.position}: ${p.message}`,
        );
      }
    }
  }
  return found;
}
