import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import { startMcpStation } from "../mcp/helpers.ts";
import { startTestStation } from "../helpers/station.ts";
import { type RawAnswer, sendThenRead } from "./raw_http.ts";

const TOKEN = "host-origin-test-token-0123456789";

/** A page on rebind.evil.example whose name was made to resolve to 127.0.0.1 (DNS rebinding). */
const REBINDING = {
  host: "rebind.evil.example:8585",
  origin: "http://rebind.evil.example:8585",
  "sec-fetch-site": "same-origin",
};

/** One request on a raw socket, with exactly the Host (and other headers) given; the server closes after it. */
function send(
  url: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<RawAnswer> {
  const lines = Object.entries({
    ...headers,
    connection: "close",
    ...(body !== undefined && { "content-type": "application/json", "content-length": String(body.length) }),
  }).map(([k, v]) => `${k}: ${v}\r\n`).join("");
  return sendThenRead(
    Number(new URL(url).port),
    `${method} ${path} HTTP/1.1\r\n${lines}\r\n${body ?? ""}`,
    undefined,
  );
}

const codeOf = (res: RawAnswer) => JSON.parse(res.body).error.code;

Deno.test("host rule: on loopback with no token a rebinding page is refused on the API, the dashboard, SSE and webhooks", async () => {
  const ts = await startTestStation({
    configYaml:
      "events:\n  hooks:\n    ci:\n      secret: a-webhook-secret-of-some-length\n      event: ci.push\n",
  });
  try {
    const url = ts.station.url;
    const port = new URL(url).port;
    Deno.mkdirSync(`${ts.station.ctx.config.paths.environments}/default`, { recursive: true });
    const refused: [string, string, string?][] = [
      ["POST", "/api/v1/sandbox/run", JSON.stringify({ code: "print(1)" })],
      ["PUT", "/api/v1/environments/default/variables/X", JSON.stringify({ value: "pwned" })],
      ["GET", "/ui/runs"],
      ["GET", "/ui"],
      ["GET", "/api/v1/workflow-runs/some-run/events"],
      ["POST", "/api/v1/hooks/ci", "{}"],
      ["GET", "/api/v1/version"],
      ["GET", "/health"],
    ];
    for (const [method, path, body] of refused) {
      const res = await send(url, method, path, REBINDING, body);
      assertEquals([res.status, codeOf(res)], [403, "host_not_allowed"], `${method} ${path}: ${res.body}`);
      assertMatch(JSON.parse(res.body).error.hint, /server\.allowed_hosts/);
    }
    // Nothing was written by the refused PUT.
    const variable = await send(url, "GET", "/api/v1/environments/default/variables/X", {
      host: `127.0.0.1:${port}`,
    });
    assertEquals(variable.status, 404, variable.body);

    // What curl and stn's own clients send still works: every loopback name, any port.
    for (
      const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, "127.0.0.1", "LOCALHOST:1"]
    ) {
      assertEquals((await send(url, "GET", "/api/v1/version", { host })).status, 200, host);
      assertEquals((await send(url, "GET", "/ui/runs", { host })).status, 200, host);
    }
    const created = await send(
      url,
      "PUT",
      "/api/v1/environments/default/variables/X",
      { host: `127.0.0.1:${port}` },
      JSON.stringify({ value: "ok" }),
    );
    assert(created.status < 300, created.body);
    // An IP other than loopback is no name of a loopback server either.
    assertEquals(
      codeOf(await send(url, "GET", "/api/v1/version", { host: "10.0.0.1:8585" })),
      "host_not_allowed",
    );
    assertEquals(codeOf(await send(url, "GET", "/api/v1/version", {})), "host_not_allowed");

    // A page's Origin must be this machine (any port, http) or stn's own address.
    const good = { host: `127.0.0.1:${port}` };
    assertEquals(
      (await send(url, "GET", "/api/v1/version", { ...good, origin: "http://localhost:3000" })).status,
      200,
    );
    for (const origin of ["http://evil.example", "null", "https://127.0.0.1.evil.example"]) {
      const res = await send(url, "GET", "/api/v1/version", { ...good, origin });
      assertEquals([res.status, codeOf(res)], [403, "origin_not_allowed"], origin);
    }
    // Sec-Fetch-Site: same-origin admits nothing by itself: the Origin is still checked.
    const forged = await send(
      url,
      "PUT",
      "/api/v1/environments/default/variables/Y",
      { ...good, origin: "http://rebind.evil.example:8585", "sec-fetch-site": "same-origin" },
      JSON.stringify({ value: "pwned" }),
    );
    assertEquals(forged.status, 403, forged.body);
  } finally {
    await ts.close();
  }
});

Deno.test("host rule: both MCP ports follow the same rule", async () => {
  const s = await startMcpStation();
  try {
    for (const url of [s.mcpUrl, s.agentUrl]) {
      const res = await send(url, "POST", "/mcp", REBINDING, "{}");
      assertEquals([res.status, codeOf(res)], [403, "host_not_allowed"], url);
      const ok = await send(url, "GET", "/nowhere", { host: `localhost:${new URL(url).port}` });
      assertEquals(ok.status, 404, "a loopback name passes the rule");
    }
  } finally {
    await s.close();
  }
});

Deno.test("host rule: off loopback, IPs, server.allowed_hosts and server.public_url are accepted, other names are not", async () => {
  const ts = await startTestStation({
    configYaml: `server:\n  host: 0.0.0.0\n  api_token: ${TOKEN}\n  allowed_hosts: [stn.example.com]\n` +
      "  public_url: https://stn.public.example/\n",
  });
  try {
    const url = ts.station.url;
    const auth = { authorization: `Bearer ${TOKEN}` };
    for (
      const host of [
        "stn.example.com:8585",
        "STN.example.com",
        "stn.public.example",
        "192.168.1.5:8585",
        "[fd00::1]",
        "localhost:1",
      ]
    ) {
      assertEquals((await send(url, "GET", "/api/v1/version", { ...auth, host })).status, 200, host);
    }
    const res = await send(url, "GET", "/api/v1/version", { ...auth, host: "rebind.evil.example:8585" });
    assertEquals([res.status, codeOf(res)], [403, "host_not_allowed"]);
    assertMatch(JSON.parse(res.body).error.hint, /server\.allowed_hosts/);
    // The dashboard served through the proxy (https, another port) may post to the API.
    const viaProxy = await send(
      url,
      "POST",
      "/api/v1/workflows/validate",
      {
        ...auth,
        host: "stn.public.example",
        origin: "https://stn.public.example",
        "sec-fetch-site": "same-origin",
      },
      JSON.stringify({ id: "w", states: [{ id: "a", type: "inject", data: {} }] }),
    );
    assertEquals(viaProxy.status, 200, viaProxy.body);
  } finally {
    await ts.close();
  }
});

Deno.test("host rule: on loopback, server.allowed_hosts admits a tunnel's name", async () => {
  const ts = await startTestStation({ configYaml: "server:\n  allowed_hosts: [abc.tunnel.example]\n" });
  try {
    const url = ts.station.url;
    assertEquals((await send(url, "GET", "/api/v1/version", { host: "abc.tunnel.example" })).status, 200);
    assertEquals((await send(url, "GET", "/api/v1/version", { host: "other.tunnel.example" })).status, 403);
  } finally {
    await ts.close();
  }
});
