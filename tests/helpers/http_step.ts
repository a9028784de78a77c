import { z } from "zod";
import { common } from "../../src/workflows/steps/fields.ts";
import type { Executor, StepType } from "../../src/workflows/steps/types.ts";

const schema = () => z.strictObject({ ...common, type: z.literal("http_get"), url: z.string().url() });
type HttpGetState = z.infer<ReturnType<typeof schema>>;

const execute: Executor<HttpGetState> = async (step, _scope, ctx) => {
  const url = new URL(step.url);
  url.searchParams.set("run", ctx.runId);
  url.searchParams.set("path", ctx.path);
  url.searchParams.set("attempt", String(ctx.attempt));
  const res = await fetch(url, { signal: ctx.signal });
  return { kind: "completed", output: await res.json() };
};

/**
 * A test's own step type (registerStepType): GETs a URL and completes with its JSON answer, so a
 * workflow's steps wait on I/O (a local HTTP server that delays) without sandboxes or timers.
 */
export const httpGet: StepType<HttpGetState> = { type: "http_get", schema, executor: execute };
