import { request } from "node:http";
import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import { connectHttp, startMcpStation } from "./helpers.ts";
import { call } from "./scenario.ts";

const TOKEN = "mcp-test-token-0123456789abcdef";

const INITIALIZE = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
});

/** A raw MCP HTTP request (what a browser page or a script without the SDK sends). */
async function send(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; headers: Headers; text: string }> {
  const res = await fetch(url, {
    method: init.method ?? "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...init.headers,
    },
    body: init.method === "GET" || init.method === "DELETE" ? undefined : (init.body ?? INITIALIZE),
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** The status of a POST with a chosen Host header (fetch may not set Host; a DNS-rebinding page's browser does). */
function statusWithHost(url: string, host: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method: "POST",
      headers: {
        ...headers,
        host,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
    }, (res) => {
      res.resume();
      resolve(res.statusCode!);
    });
    req.on("error", reject);
    req.end(INITIALIZE);
  });
}

Deno.test("mcp: off loopback every MCP request needs the API token; a bad Origin is refused", async () => {
  const s = await startMcpStation({ configYaml: `server:\n  host: 0.0.0.0\n  api_token: ${TOKEN}\n` });
  try {
    for (const url of [s.mcpUrl, s.agentUrl]) {
      for (const method of ["POST", "GET", "DELETE"]) {
        for (const auth of [undefined, "Bearer wrong-token-wrong-token", "Basic abc"]) {
          const res = await send(url, { method, headers: auth ? { authorization: auth } : {} });
          assertEquals(res.status, 401, `${method} ${url} with ${auth}`);
          assertMatch(res.headers.get("www-authenticate") ?? "", /^Bearer/);
          assertEquals(JSON.parse(res.text).error.code, "unauthorized");
        }
      }
      const evil = await send(url, {
        headers: { authorization: `Bearer ${TOKEN}`, origin: "http://evil.example.com" },
      });
      assertEquals([evil.status, JSON.parse(evil.text).error.code], [403, "origin_not_allowed"]);
      const client = await connectHttp(url, { authorization: `Bearer ${TOKEN}` });
      assert((await client.listTools()).tools.length > 0);
      await client.close();
    }
    const client = await connectHttp(s.mcpUrl, { authorization: `Bearer ${TOKEN}` });
    assertEquals((await call(client, "list_workflows", {})).workflows, []);
    await client.close();
  } finally {
    await s.close();
  }
});

Deno.test("mcp: on loopback, mcp_auth always requires the token; Host and Origin must be this machine", async () => {
  const s = await startMcpStation({
    configYaml: `server:\n  api_token: ${TOKEN}\n  mcp_auth: always\n  mcp_session_idle: 1s\n`,
  });
  try {
    assertEquals((await send(s.mcpUrl)).status, 401);
    const auth = { authorization: `Bearer ${TOKEN}` };
    const ok = await send(s.mcpUrl, { headers: { ...auth, origin: new URL(s.mcpUrl).origin } });
    assertEquals(ok.status, 200);
    assertEquals(await statusWithHost(s.mcpUrl, "evil.example.com", auth), 403);
    assertEquals(await statusWithHost(s.mcpUrl, `localhost:${new URL(s.mcpUrl).port}`, auth), 200);
    const page = await send(s.agentUrl, { headers: { ...auth, origin: "https://evil.example.com" } });
    assertEquals(page.status, 403);

    // A session unused for mcp_session_idle is closed: its id is answered 404 and the client starts over.
    const session = ok.headers.get("mcp-session-id")!;
    const ping = JSON.stringify({ jsonrpc: "2.0", id: 2, method: "ping" });
    const headers = { ...auth, "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" };
    assertEquals((await send(s.mcpUrl, { headers, body: ping })).status, 200);
    await new Promise((r) => setTimeout(r, 1_600));
    assertEquals((await send(s.mcpUrl, { headers, body: ping })).status, 404);

    // DELETE ends a session at once.
    const again = await send(s.mcpUrl, { headers: auth });
    const ended = { ...headers, "mcp-session-id": again.headers.get("mcp-session-id")! };
    assertEquals((await send(s.mcpUrl, { method: "DELETE", headers: ended })).status, 200);
    assertEquals((await send(s.mcpUrl, { headers: ended, body: ping })).status, 404);
  } finally {
    await s.close();
  }
});

Deno.test("mcp: mcp_auth always with no token to require refuses to start", async () => {
  const err = await startMcpStation({ configYaml: "server:\n  mcp_auth: always\n" }).then(
    (s) => s.close().then(() => null),
    (e) => e,
  );
  assertEquals(err?.code, "api_token_required");
});
