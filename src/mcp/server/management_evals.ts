/** The management server's eval tools (docs/evals.md#api-and-mcp): run, read and compare eval runs; datasets. */

import { z } from "zod";
import type { StationClient } from "../../client/http.ts";
import {
  compareEvalRuns,
  evalReport,
  generateEvalDataset,
  getEval,
  listEvalDatasets,
  listEvals,
  startEval,
} from "../../client/evals.ts";
import {
  EvalCompareQuery,
  EvalDatasetQuery,
  EvalIdParam,
  EvalListQuery,
  GenerateDatasetBody,
  StartEvalFields,
} from "../../contract/evals.ts";
import { type McpToolSpec, zodTool } from "./tool.ts";

const RunEvalArgs = StartEvalFields.extend({
  wait: z.boolean().default(false).describe(
    "answer when the eval run has ended (default: at once; poll get_eval)",
  ),
});

const ReportArgs = EvalIdParam.extend({
  format: z.enum(["md", "html"]).default("md").describe(
    "md: GitHub-flavoured Markdown (default); html: one self-contained page (no script, no external asset)",
  ),
});

/** The eval tools of the management server. */
export function evalTools(client: StationClient): McpToolSpec[] {
  return [
    zodTool(
      "run_eval",
      "Run a dataset (inline `dataset`, or `dataset_file` of the environment's evals/ folder) against an agent " +
        "or workflow: each case an ordinary run, scored (expected, schema, tools, latency, tokens, judge). " +
        "Answers the eval run (its eval_id); with wait: true, its end with aggregates and each case.",
      RunEvalArgs,
      ({ wait, ...body }, signal) => startEval(client, body, { wait, signal }),
    ),
    zodTool(
      "get_eval",
      "An eval run: status, aggregates per scorer, tool effectiveness, each case (run_id, answer, scores and " +
        "the judge's reasoning), the comparison with its baseline.",
      EvalIdParam,
      (a) => getEval(client, a.eval_id),
    ),
    {
      ...zodTool(
        "get_eval_report",
        "An eval run's report, the text `stn eval report` writes: aggregates, score distributions, tool " +
          "effectiveness and each case's answer, scores and tool calls; Markdown (default) or an HTML page.",
        ReportArgs,
        (a) => evalReport(client, a.eval_id, a.format),
      ),
      rawStrings: true, // the report is the answer's text, not a JSON string of it
    },
    zodTool(
      "list_evals",
      "Eval runs, newest first (without their cases).",
      EvalListQuery,
      (q) => listEvals(client, q),
    ),
    zodTool(
      "compare_evals",
      "Compare eval run `head` with `base`: per-scorer deltas, the cases that got worse, and whether a score " +
        "dropped by more than max_regression (`regressed`).",
      EvalCompareQuery,
      (q) => compareEvalRuns(client, q.base, q.head, q.max_regression),
    ),
    zodTool(
      "list_eval_datasets",
      "The dataset files of an environment's evals/ folder, with their case counts.",
      EvalDatasetQuery,
      (q) => listEvalDatasets(client, q.environment),
    ),
    zodTool(
      "generate_eval_dataset",
      "Have the configured model write test cases for an agent from its prompt, tools and schemas " +
        "(strategy common, edge_cases or comprehensive). Returns the cases to review; nothing is saved or run.",
      GenerateDatasetBody,
      (body) => generateEvalDataset(client, body),
    ),
  ];
}
