/** Scoring one case: the dataset's scorers in order over what its run showed, the judge among them. */

import type { EvalCaseInput, EvalScore } from "../contract/evals.ts";
import { type Judge, judgeCase } from "./judge.ts";
import { type Observed, scoreExpected, scoreMeasure, scorersOf, scoreSchema, scoreTools } from "./scorers.ts";
import { caseTask } from "./target.ts";

/** Every score of a case, by the dataset's scorers (the judge's dataset is the case's). */
export async function scoreCase(
  judge: Judge,
  input: EvalCaseInput,
  observed: Observed,
): Promise<EvalScore[]> {
  const { dataset } = judge;
  const scores: EvalScore[] = [];
  for (const name of scorersOf(dataset, observed.outputSchema !== undefined)) {
    if (name === "expected") scores.push(await scoreExpected(input, observed));
    if (name === "schema") scores.push(scoreSchema(observed));
    if (name === "tools") scores.push(scoreTools(input, dataset, observed));
    if (name === "latency") {
      scores.push(
        scoreMeasure("latency", observed.durationMs, input.max_latency_ms ?? dataset.max_latency_ms),
      );
    }
    if (name === "tokens") {
      scores.push(scoreMeasure("tokens", observed.totalTokens, input.max_tokens ?? dataset.max_tokens));
    }
    if (name === "judge") {
      const answer = observed.completed ? observed.answer : null;
      scores.push(await judgeCase(judge, { ...input, task: caseTask(input) }, answer));
    }
  }
  return scores;
}
