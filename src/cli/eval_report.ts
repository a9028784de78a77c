/**
 * `stn eval report <eval> -o FILE`: an eval run written as a self-contained HTML page (a .html file) or as
 * Markdown, from the station (an eval run id) or from a file holding an eval run (`stn eval run --json`).
 */

import { extname, resolve } from "node:path";
import type { Command } from "./command.ts";
import type { EvalRun } from "../contract/evals.ts";
import * as evalsAnswers from "../client/answers/evals.ts";
import { errorMessage, usageError } from "../errors.ts";
import { parseAnswer, type StationClient } from "../client/http.ts";
import { writeFileAtomic } from "../lib/write_atomic.ts";
import { evalReportHtml, REPORT_MARK_HTML } from "../reports/eval_html.tsx";
import { evalReportMarkdown, REPORT_MARK_MD } from "../reports/eval_markdown.ts";
import { jsonMode, withStation } from "./context.ts";
import { render } from "./output.ts";

type Format = "html" | "md";

const FORMATS: Record<string, Format> = { ".html": "html", ".htm": "html", ".md": "md", ".markdown": "md" };

/** The report's format: `--format`, else the output file's extension. */
function formatOf(output: string, flag: string | undefined): Format {
  const format = flag ?? FORMATS[extname(output).toLowerCase()];
  if (format === "html" || format === "md") return format;
  throw usageError(
    "invalid_usage",
    flag
      ? `--format ${flag}: write html or md`
      : `-o ${output}: the file's extension says neither HTML nor Markdown`,
    "end the file name in .html or .md, or pass --format html|md",
  );
}

/** Checks the output before any work: its folder exists, and an existing file is a report stn wrote. */
async function checkTarget(path: string): Promise<void> {
  const existing = await Deno.readTextFile(path).catch((err) =>
    err instanceof Deno.errors.NotFound ? undefined : `unreadable: ${errorMessage(err)}`
  );
  const head = existing?.slice(0, 600);
  if (head !== undefined && !head.includes(REPORT_MARK_HTML) && !head.includes(REPORT_MARK_MD)) {
    throw usageError(
      "invalid_usage",
      `-o ${path}: the file exists and is not a report stn wrote; stn does not overwrite it`,
      "give a new file name (or remove the file yourself)",
    );
  }
}

/** An eval run from a JSON file (`stn eval run --json > eval.json`), checked against the contract. */
async function readEvalFile(path: string): Promise<EvalRun> {
  let value: unknown;
  try {
    value = JSON.parse(await Deno.readTextFile(path));
  } catch (err) {
    throw usageError("invalid_usage", `${path}: not a JSON eval run: ${errorMessage(err)}`);
  }
  return parseAnswer(evalsAnswers.EvalRun, value, path);
}

/** GET /api/v1/evals/{eval_id}: the eval run with its cases. */
function fetchEvalRun(client: StationClient, id: string): Promise<EvalRun> {
  return client.json("GET", `/api/v1/evals/${encodeURIComponent(id)}`, { answer: evalsAnswers.EvalRun });
}

/** Adds `report` to the `stn eval` command group. */
export function evalReportCommand(group: Command): Command {
  group.command("report")
    .description(
      "write an eval run's report: aggregates, score charts, each case's answer, scores and tool calls",
    )
    .argument("<eval>", "an eval run id (eval_…), or a JSON file holding an eval run (`stn eval run --json`)")
    .requiredOption(
      "-o, --output <file>",
      "the report file: a .html file (a self-contained page) or a .md file",
    )
    .option("--format <format>", "html or md (default: from the file's extension)")
    .addHelpText(
      "after",
      "\nThe HTML report has no script and no external asset: it opens offline and can be attached anywhere." +
        "\nAn existing file is overwritten only when it is a report stn wrote.",
    )
    .action(async (source: string, opts: { output: string; format?: string }, cmd) => {
      const output = resolve(opts.output);
      const format = formatOf(output, opts.format);
      await checkTarget(output);
      const fromFile = await Deno.stat(source).then((s) => s.isFile, () => false);
      const run = fromFile
        ? await readEvalFile(source)
        : await withStation(cmd, (client) => fetchEvalRun(client, source));
      const text = format === "html" ? await evalReportHtml(run) : evalReportMarkdown(run);
      try {
        await writeFileAtomic(output, text);
      } catch (err) {
        throw usageError("invalid_usage", `-o ${opts.output}: cannot write the report: ${errorMessage(err)}`);
      }
      render({ eval_id: run.eval_id, output, format, cases: run.cases?.length ?? 0 }, {
        json: jsonMode(cmd),
        text: (r) => [`wrote the ${r.format} report of ${r.eval_id} (${r.cases} case(s)) to ${r.output}`],
      });
    });
  return group;
}
