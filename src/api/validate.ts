import type { Context } from "hono";
import type { z } from "zod";
import { StationError } from "../errors.ts";
import { requireShallow } from "../lib/nesting.ts";

/** Reads a JSON request body and validates it; a bad body is a 400 `invalid_request` listing each problem. */
export async function readJson<S extends z.ZodType>(c: Context, schema: S): Promise<z.infer<S>> {
  let body: unknown;
  try {
    const text = await c.req.text();
    body = text.trim() === "" ? {} : JSON.parse(text);
  } catch (err) {
    throw new StationError("invalid_json", `request body is not valid JSON: ${(err as Error).message}`, {
      hint: "send a JSON object with Content-Type: application/json",
    });
  }
  return parseWith(schema, requireShallow(body, "request body"), "request body");
}

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
