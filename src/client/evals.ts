import type { z } from "zod";
import type {
  EvalCompare,
  EvalDatasetList,
  EvalListQuery,
  EvalRun,
  EvalRunList,
  GenerateDatasetBody,
  GeneratedDataset,
  StartEvalBody,
} from "../contract/evals.ts";
import * as evalsAnswers from "./answers/evals.ts";
import type { StationClient } from "./http.ts";

/** Calls of /api/v1/evals and /api/v1/eval-datasets (docs/evals.md). */

/** POST /api/v1/evals: the started eval run (its end with `wait`). */
export function startEval(
  client: StationClient,
  body: StartEvalBody,
  options: { wait?: boolean; signal?: AbortSignal } = {},
): Promise<EvalRun> {
  return client.json("POST", "/api/v1/evals", {
    body,
    query: { wait: options.wait ? "1" : undefined },
    answer: evalsAnswers.EvalRun,
    signal: options.signal,
  });
}

/** GET /api/v1/evals */
export function listEvals(client: StationClient, query: EvalListQuery = {}): Promise<EvalRunList> {
  return client.json("GET", "/api/v1/evals", { query, answer: evalsAnswers.EvalRunList });
}

/** GET /api/v1/evals/:id, with its cases. */
export function getEval(client: StationClient, evalId: string): Promise<EvalRun> {
  return client.json("GET", `/api/v1/evals/${encodeURIComponent(evalId)}`, { answer: evalsAnswers.EvalRun });
}

/** GET /api/v1/evals/:id/report: the eval run's report as Markdown or as a self-contained HTML page. */
export async function evalReport(
  client: StationClient,
  evalId: string,
  format: "md" | "html",
): Promise<string> {
  const res = await client.fetch("GET", `/api/v1/evals/${encodeURIComponent(evalId)}/report`, {
    query: { format },
    signal: AbortSignal.timeout(60_000),
  });
  return await res.text();
}

/** GET /api/v1/evals/compare */
export function compareEvalRuns(
  client: StationClient,
  base: string,
  head: string,
  maxRegression?: number,
): Promise<EvalCompare> {
  return client.json("GET", "/api/v1/evals/compare", {
    query: { base, head, max_regression: maxRegression === undefined ? undefined : String(maxRegression) },
    answer: evalsAnswers.EvalCompare,
  });
}

/** GET /api/v1/eval-datasets */
export function listEvalDatasets(
  client: StationClient,
  environment?: string,
): Promise<z.infer<typeof EvalDatasetList>> {
  return client.json("GET", "/api/v1/eval-datasets", {
    query: { environment },
    answer: evalsAnswers.EvalDatasetList,
  });
}

/** POST /api/v1/eval-datasets/generate */
export function generateEvalDataset(
  client: StationClient,
  body: GenerateDatasetBody,
): Promise<GeneratedDataset> {
  return client.json("POST", "/api/v1/eval-datasets/generate", {
    body,
    answer: evalsAnswers.GeneratedDataset,
    signal: AbortSignal.timeout(10 * 60_000), // the model writes every case in one answer
  });
}
