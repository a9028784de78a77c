import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import {
  EventBody,
  EventList,
  EventListQuery,
  HookParam,
  SendEventAnswer,
  SignalAnswer,
  SignalBody,
  SignalList,
} from "../../contract/events.ts";
import { RunIdParam } from "../../contract/runs.ts";
import { StationError } from "../../errors.ts";
import { deliveryFingerprints, WebhookDeliveries } from "../../events/webhook_deliveries.ts";
import { hookEvent, verifyHook } from "../../events/webhooks.ts";
import type { StationContext } from "../../context.ts";
import { eventView, type SendEventResult, signalView } from "../../workflows/engine/mod.ts";
import { sendEvent } from "../../workflows/events.ts";
import { errors, json, openapi, router } from "../openapi.ts";
import { requireRun } from "./workflow_runs.ts";

const tags = ["events"];
const sendErrors = errors("invalid_json", "invalid_request", "body_too_large");
const send = createRoute({
  method: "post",
  path: "/",
  tags,
  summary: "Send an event: resumes every waiting step it matches and starts every workflow it triggers",
  request: { body: { content: { "application/json": { schema: EventBody } } } },
  responses: {
    201: json(SendEventAnswer, "the event, recorded with the runs it resumed and started"),
    200: json(SendEventAnswer, "a repeated id: nothing was done (duplicate: true)"),
    ...sendErrors,
  },
});
const list = createRoute({
  method: "get",
  path: "/",
  tags,
  summary: "List recorded events, newest first (kept for events.retention)",
  request: { query: EventListQuery },
  responses: { 200: json(EventList, "one page of events"), ...errors("invalid_request") },
});
const hook = createRoute({
  method: "post",
  path: "/{name}",
  tags,
  summary: "A signed webhook: turned into an event (no API token; the hook's own signature instead)",
  request: {
    params: HookParam,
    body: { content: { "application/json": { schema: { type: "object" as const } } } },
  },
  responses: {
    201: json(SendEventAnswer, "the event the webhook became"),
    200: json(
      SendEventAnswer,
      "a repeated id, or a replayed delivery (same delivery id, or same signature and body, within " +
        "events.hook_replay_window): nothing was done (duplicate: true)",
    ),
    ...errors("hook_not_found", "invalid_signature", "hook_payload_invalid", "body_too_large"),
  },
});
const signal = createRoute({
  method: "post",
  path: "/{run_id}/signal",
  tags: ["runs"],
  summary: "Signal a run: delivered to its step waiting for that name, else kept until one waits for it",
  request: { params: RunIdParam, body: { content: { "application/json": { schema: SignalBody } } } },
  responses: {
    200: json(SignalAnswer, "the signal, delivered or kept"),
    ...errors("invalid_json", "invalid_request", "run_not_found", "run_finished"),
  },
});
const signals = createRoute({
  method: "get",
  path: "/{run_id}/signals",
  tags: ["runs"],
  summary: "The signals a run received, delivered or still kept",
  request: { params: RunIdParam },
  responses: { 200: json(SignalList, "the signals, oldest first"), ...errors("run_not_found") },
});

function answer(r: SendEventResult) {
  return { event: eventView(r.event), duplicate: r.duplicate };
}

/** /api/v1/events: send and list events. */
export function eventRoutes(ctx: StationContext): OpenAPIHono {
  const app = router();
  openapi(app, send, async (c) => {
    const r = await sendEvent(ctx, { ...c.req.valid("json"), source: "api" });
    return c.json(answer(r), r.duplicate ? 200 : 201);
  });
  openapi(app, list, (c) => {
    const q = c.req.valid("query");
    const page = ctx.runs.events({ name: q.name, cursor: q.cursor, limit: q.limit });
    return c.json({ events: page.events, next_cursor: page.nextCursor }, 200);
  });
  return app;
}

/** /api/v1/hooks/{name}: signed webhooks, verified before anything is read or recorded. */
export function hookRoutes(ctx: StationContext): OpenAPIHono {
  const app = router();
  const deliveries = new WebhookDeliveries(ctx.db, ctx.config.values.events.hook_replay_window);
  openapi(app, hook, async (c) => {
    const { name } = c.req.valid("param");
    const config = Object.hasOwn(ctx.config.values.events.hooks, name)
      ? ctx.config.values.events.hooks[name]
      : undefined;
    if (!config) {
      throw new StationError("hook_not_found", `no webhook \`${name}\` is configured`, {
        status: 404,
        hint: "webhooks are configured under events.hooks in config.yaml (docs/events.md)",
      });
    }
    const body = new Uint8Array(await c.req.arrayBuffer());
    const headers = Object.fromEntries([...c.req.raw.headers].map(([k, v]) => [k.toLowerCase(), v]));
    verifyHook(config, headers, body);
    const fingerprints = deliveryFingerprints(config, headers, body);
    const r = await sendEvent(ctx, {
      ...await hookEvent(name, config, headers, body),
      claim: (eventId, nowMs) => deliveries.claim(name, fingerprints, eventId, nowMs),
    });
    return c.json(answer(r), r.duplicate ? 200 : 201);
  }, { body: "raw" });
  return app;
}

/** /api/v1/workflow-runs/{run_id}/signal and /signals (mounted next to the run routes). */
export function signalRoutes(ctx: StationContext): OpenAPIHono {
  const app = router();
  openapi(app, signal, async (c) => {
    const { run_id: runId } = c.req.valid("param");
    requireRun(ctx, runId);
    const body = c.req.valid("json");
    const r = await ctx.engine.signal(runId, { name: body.name, data: body.payload, id: body.id });
    const view = signalView(r.signal, r.deliveredTo);
    const message = r.duplicate
      ? "signal already received (same id): nothing done"
      : r.deliveredTo
      ? `signal delivered to step ${r.deliveredTo}`
      : "signal kept on the run until a step waits for it";
    return c.json(
      { run: ctx.runs.view(requireRun(ctx, runId)), signal: view, duplicate: r.duplicate, message },
      200,
    );
  });
  openapi(app, signals, (c) => {
    const run = requireRun(ctx, c.req.valid("param").run_id);
    return c.json({ signals: ctx.runs.signals(run.id) }, 200);
  });
  return app;
}
