import { Hono } from "hono";
import { streamSSE } from "hono/streaming";
import { z } from "zod";
import { StationError } from "../../errors.ts";
import { followRunEvents } from "../../events/run_events.ts";
import type { StationContext } from "../../runtime/context.ts";
import type { WorkflowDefinition } from "../../workflows/definition/schema.ts";
import { validateDefinition } from "../../workflows/definition/validate.ts";
import { type AttemptRow, RUN_STATUSES, type RunRow } from "../../workflows/engine/ledger.ts";
import { runView, stepView } from "../../workflows/engine/views.ts";
import { requireSandboxFor } from "../sandbox_required.ts";
import { parseWith, readJson } from "../validate.ts";

const StartBody = z.strictObject({
  workflowId: z.string().min(1).optional(),
  version: z.int().min(1).optional(),
  input: z.record(z.string(), z.unknown()).default({}),
  /** A normalised definition to run as-is (what `stn workflow run file.yaml` sends when no store is present). */
  definition: z.unknown().optional(),
});

const ListQuery = z.object({
  workflow_id: z.string().optional(),
  status: z.enum(RUN_STATUSES).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(50),
  cursor: z.string().optional(),
});

/**
 * Resolves what to run: an inline definition is validated and registered in the store first (so
 * cron and CI can run a file with nothing synced); else the stored workflow (latest or `version`).
 */
function resolveDefinition(
  ctx: StationContext,
  body: z.infer<typeof StartBody>,
): { definition: WorkflowDefinition; version: number } {
  if (body.definition !== undefined) {
    const checked = validateDefinition(body.definition);
    if (!checked.valid) {
      throw new StationError(
        "invalid_definition",
        `the workflow definition is invalid: ${
          checked.errors.map((e) => `${e.path}: ${e.message}`).join("; ")
        }`,
        { status: 400, details: { errors: checked.errors }, hint: checked.errors[0]?.hint },
      );
    }
    const saved = ctx.workflows.save(checked.definition!, { source: "api" });
    return { definition: checked.definition!, version: saved.version };
  }
  if (!body.workflowId) {
    throw new StationError("invalid_request", "give workflowId (a stored workflow) or definition", {
      status: 400,
    });
  }
  const record = ctx.workflows.record(body.workflowId);
  if (record.status === "disabled") {
    throw new StationError("workflow_disabled", `workflow ${record.id} is disabled`, {
      status: 409,
      hint: `enable it first (stn workflow enable ${record.id})`,
    });
  }
  const stored = ctx.workflows.get(body.workflowId, body.version);
  return { definition: stored.definition, version: stored.version };
}

async function start(ctx: StationContext, body: z.infer<typeof StartBody>, traceparent?: string) {
  const { definition, version } = resolveDefinition(ctx, body);
  requireSandboxFor(ctx, definition);
  return runView(
    await ctx.engine.startRun({ definition, workflowVersion: version, input: body.input, traceparent }),
  );
}

/** POST /api/v1/workflows/:id/runs `{version?, input?}`: starts a run of a stored workflow. */
export function workflowStartRoutes(ctx: StationContext): Hono {
  return new Hono().post("/:id/runs", async (c) => {
    const body = await readJson(c, StartBody.omit({ workflowId: true, definition: true }));
    return c.json(
      await start(ctx, { ...body, workflowId: c.req.param("id") }, c.req.header("traceparent")),
      201,
    );
  });
}

/** The run or a 404. */
export function requireRun(ctx: StationContext, runId: string): RunRow {
  const run = ctx.engine.ledger.getRun(runId);
  if (!run) {
    throw new StationError("run_not_found", `no workflow run ${runId}`, {
      status: 404,
      hint: "list runs with `stn workflow runs`",
    });
  }
  return run;
}

/** /api/v1/workflow-runs: start, list, inspect, follow and control runs. */
export function workflowRunRoutes(ctx: StationContext): Hono {
  const engine = ctx.engine;
  const app = new Hono();

  app.post("/", async (c) => {
    const body = await readJson(c, StartBody);
    return c.json(await start(ctx, body, c.req.header("traceparent")), 201);
  });

  app.get("/", (c) => {
    const q = parseWith(ListQuery, c.req.query(), "query");
    const where: string[] = [];
    const params: unknown[] = [];
    if (q.workflow_id) where.push("workflow_id = ?"), params.push(q.workflow_id);
    if (q.status) where.push("status = ?"), params.push(q.status);
    if (q.cursor) where.push("id < ?"), params.push(q.cursor);
    const rows = engine.ledger.all<RunRow>(
      `SELECT * FROM workflow_runs ${
        where.length ? "WHERE " + where.join(" AND ") : ""
      } ORDER BY id DESC LIMIT ?`,
      ...params,
      q.limit + 1,
    );
    const page = rows.slice(0, q.limit);
    return c.json({
      runs: page.map(runView),
      next_cursor: rows.length > q.limit ? page[page.length - 1].id : null,
    });
  });

  app.get("/:runId", (c) => c.json(runView(requireRun(ctx, c.req.param("runId")))));

  app.get("/:runId/steps", (c) => {
    const run = requireRun(ctx, c.req.param("runId"));
    const rows = engine.ledger.all<AttemptRow>(
      "SELECT * FROM step_attempts WHERE run_id = ? ORDER BY id",
      run.id,
    );
    return c.json({ steps: rows.map(stepView) });
  });

  app.get("/:runId/events", (c) => {
    const run = requireRun(ctx, c.req.param("runId"));
    const from = c.req.header("last-event-id") ?? c.req.query("after") ?? "0";
    let after: number;
    if (from === "now") after = engine.ledger.lastSeq(run.id);
    else if (/^\d+$/.test(from)) after = Number(from);
    else {
      throw new StationError(
        "invalid_cursor",
        `after / Last-Event-ID must be a seq number or "now", got ${from}`,
        {
          status: 400,
        },
      );
    }
    return streamSSE(c, async (stream) => {
      const closed = new AbortController();
      stream.onAbort(() => closed.abort());
      const signal = AbortSignal.any([closed.signal, ctx.shutdown]);
      const live = c.req.query("follow") !== "false";
      for await (const e of followRunEvents(engine, run.id, after, signal, live)) {
        await stream.writeSSE({ id: String(e.seq), event: e.type, data: JSON.stringify(e) });
      }
    });
  });

  app.post("/:runId/cancel", async (c) => {
    const body = await readJson(c, z.strictObject({ reason: z.string().optional() }));
    requireRun(ctx, c.req.param("runId"));
    return c.json(runView(engine.cancel(c.req.param("runId"), body.reason)));
  });
  app.post("/:runId/pause", (c) => {
    requireRun(ctx, c.req.param("runId"));
    return c.json(runView(engine.pause(c.req.param("runId"))));
  });
  app.post("/:runId/resume", async (c) => {
    requireRun(ctx, c.req.param("runId"));
    return c.json(runView(await engine.resume(c.req.param("runId"))));
  });
  return app;
}
