/**
 * LLM-as-judge (docs/evals.md#the-judge): the judge model reads the task, the rubric and the answer and
 * answers `{"score": 0–1, "reasoning": "…"}`; its score and reasoning are the case's judge score, its call
 * (model, usage, raw answer) is stored with it. A malformed answer or a failed call is an error of this
 * score for this case — never of the eval run.
 */

import { z } from "zod";
import type { EvalCaseInput, EvalDataset, EvalScore } from "../contract/evals.ts";
import type { Models } from "../agents/providers.ts";
import type { ModelPrice } from "../telemetry/model_price.ts";
import { errorMessage, StationError } from "../errors.ts";
import { askModel, jsonInAnswer } from "./model_call.ts";
import { score } from "./scorers.ts";

const Verdict = z.object({ score: z.number().min(0).max(1), reasoning: z.string().min(1) });

const SYSTEM = `You are an impartial evaluator of an AI agent's answers.
Score the answer to the task against the rubric, from 0 (fails the rubric entirely) to 1 (meets it fully).
Answer with only a JSON object, no other text: {"score": <number from 0 to 1>, "reasoning": "<one to three sentences>"}`;

/** The judge's prompt for one case. */
export function judgePrompt(task: string, rubric: string, answer: string, expected?: unknown): string {
  const parts = [`Task:\n${task}`, `Rubric:\n${rubric}`];
  if (expected !== undefined) parts.push(`A reference answer:\n${JSON.stringify(expected)}`);
  parts.push(`Answer to score:\n${answer}`);
  return parts.join("\n\n");
}

/** What the judge needs: the models, its model (undefined: ai.model) and the dataset's settings. */
export interface Judge {
  models: Models;
  model?: string;
  dataset: EvalDataset;
  signal?: AbortSignal;
  /** `ai.prices`, to count the judge's cost in the metrics. */
  prices?: Record<string, ModelPrice>;
}

/** Scores one case's answer with the judge model. */
export async function judgeCase(
  j: Judge,
  c: EvalCaseInput & { task: string },
  answer: string | null,
): Promise<EvalScore> {
  const rubric = c.rubric ?? j.dataset.judge?.rubric;
  if (!rubric) return score({ scorer: "judge", passed: true, reasoning: "no rubric" });
  if (answer === null) {
    return score({
      scorer: "judge",
      score: 0,
      passed: false,
      reasoning: "no answer: the run did not complete",
    });
  }
  const passScore = j.dataset.judge?.pass_score ?? 0.7;
  let call;
  try {
    call = await askModel(j.models, {
      model: j.model,
      system: SYSTEM,
      prompt: judgePrompt(c.task, rubric, answer, c.expected),
      failure: "eval_judge_failed",
      signal: j.signal,
      caller: "eval:judge",
      prices: j.prices,
    });
  } catch (err) {
    const code = err instanceof StationError ? err.code : "eval_judge_failed";
    return score({ scorer: "judge", passed: false, error: { code, message: errorMessage(err) } });
  }
  const verdict = Verdict.safeParse(jsonInAnswer(call.answer));
  if (!verdict.success) {
    return score({
      scorer: "judge",
      passed: false,
      judge: call,
      error: {
        code: "eval_judge_invalid",
        message: `the judge's answer is not {"score": 0–1, "reasoning": "…"}: ${call.answer.slice(0, 200)}`,
      },
    });
  }
  return score({
    scorer: "judge",
    score: verdict.data.score,
    passed: verdict.data.score >= passScore,
    reasoning: verdict.data.reasoning,
    judge: call,
  });
}
