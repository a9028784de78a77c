import { Validator } from "@seriousme/openapi-schema-validator";
import { createApp } from "../../src/api/app.ts";
import { assert, assertEquals } from "../helpers/assert.ts";
import { startTestStation } from "../helpers/station.ts";

/** `/api/v1/files/*`, `/x/:id` and `/x/{id}` all become `/x/{}`, so Hono's paths compare with the document's. */
const shape = (path: string) => path.replace(/:[^/]+|\{[^}]+\}|\*/g, "{}").replace(/(.)\/$/, "$1");

Deno.test("OpenAPI: every route the app registers is in the document, which is valid OpenAPI 3.1", async () => {
  const t = await startTestStation();
  try {
    const res = await fetch(`${t.station.url}/api/v1/openapi.json`);
    assertEquals(res.status, 200);
    const doc = await res.json();
    assertEquals(doc.openapi, "3.1.0");

    const result = await new Validator().validate(doc);
    assert(result.valid, `not valid OpenAPI 3.1: ${JSON.stringify(result.errors, null, 2)}`);

    const documented = new Set<string>();
    for (const [path, item] of Object.entries(doc.paths as Record<string, object>)) {
      for (const method of Object.keys(item)) documented.add(`${method.toUpperCase()} ${shape(path)}`);
    }
    // The same app the station serves, walked route by route (middleware is registered as ALL). The
    // dashboard's HTML pages under /ui are for people, not part of the API contract (docs/dashboard.md).
    const routes = createApp(t.station.ctx).routes.filter((r) =>
      r.method !== "ALL" && !r.path.startsWith("/ui")
    );
    const missing = [...new Set(routes.map((r) => `${r.method} ${shape(r.path)}`))]
      .filter((r) => !documented.has(r));
    assertEquals(missing, [], "routes without a contract in the OpenAPI document");
    assert(routes.length >= 40, `only ${routes.length} routes found: is the walk seeing the sub-apps?`);

    // The error schema's code lists the catalogue.
    const codes = doc.components.schemas.Error.properties.error.properties.code.enum as string[];
    assert(codes.includes("run_not_found") && codes.includes("invalid_request"));

    const page = await fetch(`${t.station.url}/api/docs`);
    assertEquals([page.status, page.headers.get("content-type")?.split(";")[0]], [200, "text/html"]);
    assert((await page.text()).includes("/api/v1/openapi.json"), "the reference page loads the document");
  } finally {
    await t.close();
  }
});

Deno.test("API: a bad query or body is a 400 invalid_request naming the field, through the route's contract", async () => {
  const t = await startTestStation();
  try {
    const query = await fetch(`${t.station.url}/api/v1/workflow-runs?limit=0`);
    const q = await query.json();
    assertEquals([query.status, q.error.code], [400, "invalid_request"]);
    assertEquals(q.error.details.issues.map((i: { path: string }) => i.path), ["/limit"]);
    assert(q.error.message.startsWith("query: /limit: "), q.error.message);

    // A JSON body is read whatever its Content-Type (curl -d sends x-www-form-urlencoded).
    const body = await fetch(`${t.station.url}/api/v1/workflow-runs`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: JSON.stringify({ workflowId: "x", version: 0 }),
    });
    const b = await body.json();
    assertEquals([body.status, b.error.code, b.error.details.issues[0].path], [
      400,
      "invalid_request",
      "/version",
    ]);

    const broken = await fetch(`${t.station.url}/api/v1/workflow-runs`, { method: "POST", body: "{" });
    assertEquals([broken.status, (await broken.json()).error.code], [400, "invalid_json"]);
  } finally {
    await t.close();
  }
});

Deno.test("API: beyond loopback, a missing or wrong token is a 401 with WWW-Authenticate; health and the reference stay open", async () => {
  const token = "0123456789abcdef0123456789abcdef";
  const t = await startTestStation({ configYaml: `server:\n  host: 0.0.0.0\n  api_token: ${token}\n` });
  try {
    for (const open of ["/health", "/api/v1/openapi.json", "/api/docs"]) {
      const res = await fetch(`${t.station.url}${open}`);
      assertEquals(res.status, 200, open);
      await res.body?.cancel();
    }
    for (const authorization of [undefined, "Bearer wrong-token", "Basic abc", "Bearer bad token!"]) {
      const res = await fetch(`${t.station.url}/api/v1/version`, {
        headers: authorization ? { authorization } : {},
      });
      const body = await res.json();
      assertEquals([res.status, body.error.code], [401, "unauthorized"], String(authorization));
      assert(res.headers.get("www-authenticate")?.startsWith("Bearer"), String(authorization));
      assert(body.error.hint);
    }
    assertEquals((await t.client.version()).version, t.station.ctx.version);
  } finally {
    await t.close();
  }
});
