/**
 * The run page's repair parts (docs/workflows.md#retry-fork-and-re-run): the run's parent and forks, Retry and
 * Fork-from-here buttons, reused steps, and a box that evaluates an expression against the run's data.
 */

import type { AgentRun } from "../../contract/agent_runs.ts";
import type { RunView, StepView } from "../../workflows/engine/mod.ts";
import { ApiForm } from "../parts.tsx";

const api = (runId: string) => `/api/v1/workflow-runs/${encodeURIComponent(runId)}`;
const runLink = (runId: string) => <a href={`/ui/runs/${encodeURIComponent(runId)}`}>{runId}</a>;

/** Facts of a run's lineage: the run it was forked from (and at which step), and the runs forked from it. */
export function Lineage(props: { run: RunView; forks: RunView[] }) {
  const { run, forks } = props;
  if (!run.parent_run_id && forks.length === 0) return null;
  return (
    <dl class="facts" aria-label="Lineage">
      {run.parent_run_id
        ? (
          <>
            <dt>Forked from</dt>
            <dd>
              {runLink(run.parent_run_id)} at step <code>{run.forked_from}</code>
            </dd>
          </>
        )
        : null}
      {forks.length
        ? (
          <>
            <dt>Forks</dt>
            <dd>{forks.map((f, i) => <span key={f.run_id}>{i ? ", " : ""}{runLink(f.run_id)}</span>)}</dd>
          </>
        )
        : null}
    </dl>
  );
}

/** Whether a run can be retried: it ended failed or canceled. */
const retryable = (run: RunView) => run.status === "failed" || run.status === "canceled";

/** The run-level Retry button of a failed or canceled run. */
export function RetryButton(props: { run: RunView }) {
  if (!retryable(props.run)) return null;
  return (
    <ApiForm action={`${api(props.run.run_id)}/retry`} label="Retry run" class="inline">
      <button type="submit">Retry</button>
    </ApiForm>
  );
}

/**
 * A step row's repair cell: Retry on the step a failed run stopped at, Fork from here on each top-level step's
 * first visit, and for a reused step where its output came from (the parent's agent run for an agent step).
 */
export function StepRepair(
  props: { run: RunView; step: StepView; stoppedAt: boolean; parentAgent?: AgentRun },
) {
  const { run, step, stoppedAt, parentAgent } = props;
  const topLevel = !step.path.includes("/");
  return (
    <div class="actions">
      {step.reused_from
        ? (
          <span class="reused">
            reused from {runLink(step.reused_from.run_id)}
            {parentAgent
              ? (
                <>
                  {" "}(agent run <a href={`/ui/agent-runs/${parentAgent.run_id}`}>{parentAgent.run_id}</a>)
                </>
              )
              : null}
          </span>
        )
        : null}
      {stoppedAt && retryable(run)
        ? (
          <ApiForm action={`${api(run.run_id)}/retry`} label={`Retry from ${step.path}`} class="inline">
            <button type="submit">Retry</button>
          </ApiForm>
        )
        : null}
      {topLevel && step.visit === 1 && step.attempt === 1
        ? (
          <ApiForm
            action={`${api(run.run_id)}/fork`}
            label={`Fork from ${step.path}`}
            class="inline"
            then="/ui/runs/{id}"
          >
            <input type="hidden" name="from" value={step.path} />
            <button type="submit" class="secondary">Fork from here</button>
          </ApiForm>
        )
        : null}
    </div>
  );
}

/** The top-level attempt a failed or canceled run stopped at (what Retry runs again). */
export function stoppedAt(run: RunView, steps: StepView[]): StepView | undefined {
  if (!retryable(run)) return undefined;
  const last = steps.filter((s) => !s.path.includes("/")).at(-1);
  return last && last.status !== "completed" ? last : undefined;
}

/** An expression box: evaluates JSONata against the data a chosen step saw (or the run's data now). */
export function ExpressionBox(props: { run: RunView; steps: StepView[] }) {
  const paths = [...new Set(props.steps.map((s) => s.path))];
  return (
    <section aria-labelledby="eval-title">
      <h2 id="eval-title">Try an expression</h2>
      <ApiForm action={`${api(props.run.run_id)}/eval`} label="Evaluate an expression" show="eval-result">
        <label>
          Expression (JSONata)
          <input name="expression" required placeholder="$sum(items.price)" spellcheck={false} />
        </label>
        <label>
          Against the data this step saw
          <select name="step">
            <option value="">the run's data now</option>
            {paths.map((p) => <option key={p} value={p}>{p}</option>)}
          </select>
        </label>
        <button type="submit">Evaluate</button>
      </ApiForm>
      <pre class="json" id="eval-result" aria-label="Expression value" aria-live="polite"></pre>
    </section>
  );
}
