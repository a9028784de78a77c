import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { Scalar } from "@scalar/hono-api-reference";
import { z } from "zod";
import { errorCatalogueMarkdown } from "../../contract/errors.ts";
import { TestFile } from "../../contract/tests.ts";
import { openapi, router } from "../openapi.ts";

const DESCRIPTION =
  `The HTTP API of stn. Every error is \`{"error": {"code", "message", "hint"?, "details"?}}\`
with the HTTP status of its code. Bound beyond loopback, every route but /health and this reference
needs \`Authorization: Bearer <server.api_token>\`.

## Error codes

${errorCatalogueMarkdown()}`;

/** The OpenAPI 3.1 document of every route registered on `app`. */
export function openapiDocument(app: OpenAPIHono, version: string) {
  app.openAPIRegistry.registerComponent("securitySchemes", "bearer", {
    type: "http",
    scheme: "bearer",
    description: "server.api_token; required when stn is bound beyond loopback",
  });
  // Not a request or an answer, but a published contract too: the file `stn test` reads (docs/testing.md).
  // As JSON Schema: the registry's register() needs a schema made after zod was extended for OpenAPI, which
  // depends on which module loaded zod first (`stn serve` answered 500 where the test station did not).
  // Its named parts ($defs) become components, and their references point there.
  const json = JSON.stringify(z.toJSONSchema(TestFile, { io: "input" })).replaceAll(
    '"#/$defs/',
    '"#/components/schemas/',
  );
  const testFile = JSON.parse(json) as { $defs?: Record<string, Record<string, unknown>> };
  for (const [id, schema] of Object.entries(testFile.$defs ?? {})) {
    app.openAPIRegistry.registerComponent("schemas", id, schema);
  }
  return app.getOpenAPI31Document({
    openapi: "3.1.0",
    info: { title: "stn", version, description: DESCRIPTION },
    security: [{ bearer: [] }],
  });
}

const documentRoute = createRoute({
  method: "get",
  path: "/api/v1/openapi.json",
  tags: ["docs"],
  summary: "This document (OpenAPI 3.1)",
  responses: {
    200: {
      description: "the OpenAPI document",
      content: { "application/json": { schema: z.object({ openapi: z.string() }) } },
    },
  },
});
const referenceRoute = createRoute({
  method: "get",
  path: "/api/docs",
  tags: ["docs"],
  summary: "A browsable API reference of this document (Scalar; its script loads from a CDN)",
  responses: {
    200: { description: "an HTML page", content: { "text/html": { schema: { type: "string" as const } } } },
  },
});

/**
 * GET /api/v1/openapi.json (generated from the route contracts, once) and GET /api/docs, the reference
 * page. Scalar's page is one small HTML file that loads its renderer from jsDelivr in the reader's
 * browser: stn ships no UI bundle, and the JSON document works offline with any OpenAPI tool.
 */
export function docsRoutes(api: OpenAPIHono, version: string): OpenAPIHono {
  const app = router();
  let document: ReturnType<typeof openapiDocument> | undefined;
  openapi(app, documentRoute, (c) => c.json(document ??= openapiDocument(api, version), 200));
  const page = Scalar({ url: "/api/v1/openapi.json", pageTitle: "stn API" });
  openapi(app, referenceRoute, (c) => page(c, () => Promise.resolve()) as Promise<Response>);
  return app;
}
