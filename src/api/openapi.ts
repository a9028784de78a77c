/** Routes declared with their contract schemas (`openapi()`): stn's 400 for a bad query, path, header or body. */

import { OpenAPIHono, type RouteConfig, type RouteHandler } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import { z } from "zod";
import { ErrorBody } from "../contract/errors.ts";
import { ERROR_CODES, type ErrorCode } from "../error_codes.ts";
import { invalidRequest } from "../lib/parse.ts";
import { readJson } from "./validate.ts";

/** What a failed check was about, as the error message names it. */
const TARGETS: Record<string, string> = {
  query: "query",
  param: "path",
  header: "headers",
  json: "request body",
};

/**
 * A router whose query, path and header checks (Hono's zod validator, run by `openapi()`) fail with
 * stn's 400 `invalid_request` listing each issue, like every other error.
 */
export function router(): OpenAPIHono {
  return new OpenAPIHono({
    defaultHook: (result) => {
      if (!result.success) throw invalidRequest(TARGETS[result.target] ?? result.target, result.error);
    },
  });
}

/** The error answers of a route, each documented with the error body (its `code` lists the catalogue). */
export function errors(...codes: ErrorCode[]): RouteConfig["responses"] {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) {
    const status = ERROR_CODES[code][0];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return Object.fromEntries(
    [...byStatus].map(([status, list]) => [status, {
      description: list.map((c) => `\`${c}\``).join(", "),
      content: { "application/json": { schema: ErrorBody } },
    }]),
  );
}

/** A JSON answer of a route. */
export function json(schema: z.ZodType, description: string) {
  return { description, content: { "application/json": { schema } } };
}

/** Reads the JSON body with `readJson` (any Content-Type, an empty body is `{}`) into `c.req.valid("json")`. */
function jsonBody(schema: z.ZodType): MiddlewareHandler {
  return async (c, next) => {
    c.req.addValidatedData("json", await readJson(c, schema) as object);
    await next();
  };
}

export interface RouteOptions {
  /** "raw": the handler reads the body itself (YAML or JSON definitions, file bytes); default "json". */
  body?: "json" | "raw";
  /** The Hono path when the documented one cannot say it: `/*` for keys and paths that contain "/". */
  path?: string;
}

/**
 * Registers a route: documented in the OpenAPI document exactly as `config` says; query, path and
 * header checked by Hono's zod validator; a JSON body checked against the route's schema by `jsonBody`,
 * which reads it leniently as stn always has (scripts send `curl -d` without a JSON Content-Type) —
 * zod-openapi's own body check would refuse those, so it is left out. A "raw" route reads its body itself.
 */
export function openapi<R extends RouteConfig>(
  app: OpenAPIHono,
  config: R,
  handler: RouteHandler<R>,
  options: RouteOptions = {},
): void {
  app.openAPIRegistry.registerPath(config);
  const { body, params, ...request } = config.request ?? {};
  const media = body?.content["application/json"];
  const schema = media && "schema" in media && media.schema instanceof z.ZodType ? media.schema : undefined;
  const middleware = schema && options.body !== "raw" ? [jsonBody(schema)] : [];
  const runtime: R = {
    ...config,
    hide: true,
    path: options.path ?? config.path,
    request: options.path ? request : { ...request, params },
    middleware,
  };
  app.openapi<R>(runtime, handler);
}
