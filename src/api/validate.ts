import type { Context } from "hono";
import type { z } from "zod";
import { errorMessage, StationError } from "../errors.ts";
import { requireShallow } from "../lib/nesting.ts";
import { parseWith } from "../lib/parse.ts";

/** Reads a JSON request body and validates it; a bad body is a 400 `invalid_request` listing each problem. */
export async function readJson<S extends z.ZodType>(c: Context, schema: S): Promise<z.infer<S>> {
  let body: unknown;
  try {
    const text = await c.req.text();
    body = text.trim() === "" ? {} : JSON.parse(text);
  } catch (err) {
    throw new StationError("invalid_json", `request body is not valid JSON: ${errorMessage(err)}`, {
      hint: "send a JSON object with Content-Type: application/json",
    });
  }
  return parseWith(schema, requireShallow(body, "request body"), "request body");
}
