import type { z } from "zod";
import { StationError } from "../errors.ts";

/** Validates a value (body, query) against a schema; failures are 400 `invalid_request` with each issue's path. */
export function parseWith<S extends z.ZodType>(schema: S, value: unknown, what: string): z.infer<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw invalidRequest(what, result.error);
}

/** The 400 `invalid_request` for a failed check of `what` (query, path, request body), naming each issue. */
export function invalidRequest(what: string, error: z.ZodError): StationError {
  const issues = error.issues.map((i) => ({ path: "/" + i.path.join("/"), message: i.message }));
  return new StationError(
    "invalid_request",
    `${what}: ${issues.map((i) => `${i.path === "/" ? "" : i.path + ": "}${i.message}`).join("; ")}`,
    {
      details: { issues },
      hint: "the API reference (GET /api/docs, or /api/v1/openapi.json) shows the expected shape",
    },
  );
}
