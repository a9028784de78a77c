import { errorMessage, StationError } from "../../errors.ts";
import { idFromFileName } from "./file_name.ts";
import { parseSource } from "./source.ts";
import { validateDefinition, type ValidationResult } from "./validate.ts";

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
    throw new StationError("file_unreadable", `cannot read ${path}: ${errorMessage(err)}`, {
      status: 400,
      hint: "check the path",
    });
  }
  return validateSource(text, { fileName: path });
}
