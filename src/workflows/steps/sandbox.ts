import { z } from "zod";
import { chooseImage } from "../../sandbox/images.ts";
import { contextScope, renderTemplates } from "../expr.ts";
import { common, oneOf, templates } from "./fields.ts";
import type { Executor, Outcome, StepType } from "./types.ts";

const schema = () =>
  z.strictObject({
    ...common,
    type: z.literal("sandbox"),
    command: z.array(z.string()).min(1).check(templates).optional(),
    script: z.string().min(1).optional(),
    runtime: z.string().min(1).optional(),
    image: z.string().min(1).optional(),
    stage: z.array(
      z.strictObject({ file_key: z.string().min(1), destination: z.string().min(1) }).describe(
        "a stage entry",
      ),
    ).optional(),
    publish: z.array(z.string().min(1)).optional(),
    env: z.record(z.string(), z.string()).optional(),
  }).check(oneOf("command", "script", "a sandbox state", 'e.g. `command: ["python", "main.py"]`'));
export type SandboxState = z.infer<ReturnType<typeof schema>>;

/**
 * `type: sandbox` (docs/workflows.md): runs in the run's workflow-scoped session (one container per
 * run, shared by its steps), stages inputs, runs `command` (argv) or `script` (shell), publishes
 * outputs to runs/<run>/output/<name>. A non-zero exit fails the step; canceling the run aborts the
 * signal, which kills the command inside the container.
 */
const execute: Executor<SandboxState> = async (step, scope, ctx): Promise<Outcome> => {
  const sandbox = ctx.sandbox;
  if (!sandbox) {
    return {
      kind: "failed",
      error: {
        code: "sandbox_unavailable",
        message: `step ${step.id}: sandboxes are not available on this station`,
      },
    };
  }
  // command, script, env and stage may hold ${…} templates over the run context (spec: data flow).
  const rendered = await renderTemplates(
    { command: step.command, script: step.script, env: step.env, stage: step.stage },
    contextScope(scope),
  ) as Pick<SandboxState, "command" | "script" | "env" | "stage">;
  const env = rendered.env &&
    Object.fromEntries(Object.entries(rendered.env).map(([k, v]) => [k, String(v)]));
  const cmd = rendered.command?.map(String) ??
    (rendered.script !== undefined ? String(rendered.script) : undefined);
  if (!cmd) {
    return {
      kind: "failed",
      error: { code: "invalid_step", message: `step ${step.id} needs command or script` },
    };
  }
  const { session } = await sandbox.open({
    scope: "workflow",
    run_id: ctx.runId,
    runtime: step.runtime,
    image: step.image,
  });
  if (step.runtime || step.image) {
    const wanted = chooseImage(sandbox.config, { runtime: step.runtime, image: step.image }).image;
    if (wanted !== session.image) {
      return {
        kind: "failed",
        error: {
          code: "sandbox_image_conflict",
          message: `step ${step.id} wants ${wanted}, but this run's sandbox already runs ${session.image} ` +
            "(one container per run: give every sandbox step of a run the same runtime/image)",
        },
      };
    }
  }
  for (const s of rendered.stage ?? []) {
    await sandbox.stage(session.id, String(s.file_key), String(s.destination));
  }
  const result = await sandbox.exec(session.id, { cmd, env, signal: ctx.signal });
  if (result.exit_code !== 0) {
    return {
      kind: "failed",
      error: {
        code: result.timed_out ? "sandbox_timeout" : "sandbox_exit_nonzero",
        message: `step ${step.id}: command exited with ${result.exit_code}` +
          (result.stderr ? `: ${result.stderr.trim().slice(-500)}` : ""),
      },
    };
  }
  const files: Record<string, string> = {};
  // The run's own outputs: a retried attempt (or a later step) replaces what an earlier one published.
  for (const path of step.publish ?? []) {
    files[path] = (await sandbox.publish(session.id, path, { overwrite: true })).key;
  }
  return {
    kind: "completed",
    output: {
      exit_code: result.exit_code,
      stdout: result.stdout,
      stderr: result.stderr,
      truncated: result.truncated,
      files,
    },
  };
};

export const sandbox: StepType<SandboxState> = { type: "sandbox", schema, executor: execute };
