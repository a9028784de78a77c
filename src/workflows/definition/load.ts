import { basename } from "node:path";
import { StationError } from "../../errors.ts";
import { parseSource } from "./source.ts";
import { validateDefinition, type ValidationResult } from "./validate.ts";

/** Definition file names: `<id>.workflow.yaml|yml|json` (plain `.yaml`/`.yml`/`.json` accepted by path). */
export const WORKFLOW_FILE = /\.workflow\.(ya?ml|json)$/;

/** The workflow id a file name implies (`deploy.workflow.yaml` → `deploy`), if it names a valid one. */
export function idFromFileName(path: string): string | undefined {
  const name = basename(path).replace(WORKFLOW_FILE, "").replace(/\.(ya?ml|json)$/, "");
  return /^[a-z0-9][a-z0-9_-]*$/.test(name) ? name : undefined;
}

/** Parses and validates definition text (YAML or JSON), with line/column on every issue it can place. */
export function validateSource(
  text: string,
  options: { fileName?: string; defaultId?: string } = {},
): ValidationResult {
  const parsed = parseSource(text);
  const defaultId = options.defaultId ?? (options.fileName ? idFromFileName(options.fileName) : undefined);
  if ("error" in parsed) {
    return {
      valid: false,
      errors: [{
        code: parsed.error.code ?? "parse_error",
        path: "/",
        line: parsed.error.position?.line,
        column: parsed.error.position?.column,
        message: parsed.error.code && parsed.error.code !== "parse_error"
          ? parsed.error.message
          : `the file is not valid YAML/JSON: ${parsed.error.message}`,
        hint: parsed.error.hint ??
          "check the indentation and quoting at that line (a tab, an unclosed quote or bracket)",
      }],
      warnings: [],
    };
  }
  return validateDefinition(parsed.value, { locate: (segs, opts) => parsed.locate(segs, opts), defaultId });
}

/** Reads and validates one definition file. */
export async function loadWorkflowFile(path: string): Promise<ValidationResult> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (err) {
    throw new StationError("file_unreadable", `cannot read ${path}: ${(err as Error).message}`, {
      status: 400,
      hint: "check the path",
    });
  }
  return validateSource(text, { fileName: path });
}
