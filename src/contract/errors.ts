/** The contract of every error answer: `{error: {code, message, hint?, details?}}`. */

import { z } from "zod";
import { ERROR_CODES, type ErrorCode } from "../error_codes.ts";

const codes = Object.keys(ERROR_CODES) as [ErrorCode, ...ErrorCode[]];

/** The catalogue as a Markdown table, so the OpenAPI document carries it. */
export function errorCatalogueMarkdown(): string {
  const rows = codes.map((code) => {
    const [status, exit, meaning] = ERROR_CODES[code];
    return `| \`${code}\` | ${status} | ${exit} | ${meaning} |`;
  });
  return ["| code | HTTP status | CLI exit | meaning |", "|---|---|---|---|", ...rows].join("\n");
}

/** The body of every API error (docs/design/errors.md#the-apis-error-body). */
export const ErrorBody = z.object({
  error: z.object({
    code: z.enum(codes).describe(`a stable code from the catalogue:\n\n${errorCatalogueMarkdown()}`),
    message: z.string().describe("what went wrong, for people"),
    hint: z.string().optional().describe("what to do about it"),
    details: z.unknown().optional().describe("structured context, e.g. each validation issue"),
  }),
}).meta({ id: "Error" });
export type ErrorBody = z.infer<typeof ErrorBody>;

/** One problem with a request, as listed in `details.issues` of an `invalid_request`. */
export const RequestIssue = z.object({ path: z.string(), message: z.string() }).meta({ id: "RequestIssue" });
