import { Dotprompt } from "dotprompt";
import type { ValidationIssue } from "../../workflows/definition/validate.ts";

/**
 * The two halves of a `.prompt` file and the checks on the Handlebars half. The split is dotprompt's
 * own (its front-matter pattern), so what stn validates is what dotprompt renders; stn parses the YAML
 * half itself because dotprompt swallows YAML errors (it logs them and treats the whole file as text).
 */

/** dotprompt's FRONTMATTER_AND_BODY_REGEX (not exported by the package), with match indices. */
const FRONT_MATTER = /^---\s*(?:\r\n|\r|\n)([\s\S]*?)(?:\r\n|\r|\n)---\s*(?:\r\n|\r|\n)([\s\S]*)$/d;

/** A file split into its front matter and body, with the 1-based line each starts on. */
export interface SplitSource {
  frontMatter: string;
  /** Lines before the front matter's first line (the opening `---`). */
  frontMatterLine: number;
  body: string;
  bodyLine: number;
}

const linesBefore = (text: string, index: number) => text.slice(0, index).split(/\r\n|\r|\n/).length - 1;

/** Splits a `.prompt` file; a file without front matter is all body; an unclosed one is an issue. */
export function splitSource(text: string): SplitSource | ValidationIssue {
  // dotprompt needs a line break after the closing `---`; a file that ends right there is still whole.
  const m = FRONT_MATTER.exec(/(\r\n|\r|\n)$/.test(text) ? text : text + "\n");
  if (m?.indices) {
    const [fmStart] = m.indices[1]!;
    const [bodyStart] = m.indices[2]!;
    return {
      frontMatter: m[1],
      frontMatterLine: linesBefore(text, fmStart),
      body: m[2],
      bodyLine: linesBefore(text, bodyStart) + 1,
    };
  }
  if (/^---\s*$/m.test(text.split(/\r\n|\r|\n/)[0])) {
    return {
      code: "unclosed_front_matter",
      path: "/",
      line: 1,
      column: 1,
      message: "the front matter opened by `---` on line 1 is never closed",
      hint: "end the YAML front matter with a line holding only `---`, then write the prompt body",
    };
  }
  return { frontMatter: "", frontMatterLine: 0, body: text, bodyLine: 1 };
}

const renderer = new Dotprompt();

/** Handlebars' parse errors name a line and show the expected tokens; the rest carry line/column. */
function templateIssue(err: Error & { lineNumber?: number; column?: number }, bodyLine: number) {
  const lines = err.message.split("\n");
  const parse = /^Parse error on line (\d+):/.exec(lines[0]);
  const line = parse ? Number(parse[1]) : err.lineNumber;
  const detail = parse ? (lines.at(-1) ?? "").replace(/^Expecting /, "expecting ") : lines[0];
  const unknownHelper = /unknown helper (\S+)/.exec(detail)?.[1];
  const issue: ValidationIssue = {
    code: "invalid_template",
    path: "/body",
    message: unknownHelper
      ? `unknown Handlebars helper \`${unknownHelper}\``
      : `the prompt body is not a valid Handlebars template: ${detail.replace(/ - \d+:\d+$/, "")}`,
    hint: unknownHelper
      ? "the helpers are dotprompt's: role, json, history, section, media, ifEquals, unlessEquals, and Handlebars' if, unless, each, with; write variables as {{name}}"
      : "check that every {{#block}} has its {{/block}} and every {{ is closed by }}",
  };
  if (line !== undefined) {
    issue.line = bodyLine + line - 1;
    issue.column = (err.column ?? 0) + 1;
  }
  return issue;
}

/**
 * Compiles and renders the body once with an empty task, as the agent loop will with a real one, so a
 * syntax error, an unknown helper or a missing partial is found before any run.
 */
export async function checkTemplate(body: string, bodyLine: number): Promise<ValidationIssue[]> {
  try {
    const render = await renderer.compile({ template: body, ext: {}, config: {}, metadata: {} });
    await render({ input: { userInput: "" } });
    return [];
  } catch (err) {
    return [templateIssue(err as Error, bodyLine)];
  }
}
