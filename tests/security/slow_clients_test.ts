import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import { startTestStation } from "../helpers/station.ts";
import { converse } from "./raw_http.ts";

// Short limits keep the test fast; the defaults are 10s and 30s (docs/configuration.md).
const CONFIG = "server:\n  header_timeout: 1s\n  body_idle_timeout: 1s\n";
// Far past both limits, and far short of what an unguarded server held (87 s and 327 s, measured).
const BOUND_MS = 20_000;
const WORKFLOW = JSON.stringify({ id: "w", states: [{ id: "a", type: "inject", data: {} }] });
const HEAD =
  "POST /api/v1/workflows/validate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n";

Deno.test("slow clients: partial headers, a stalled body and an idle kept-alive connection are answered 408 and closed", async () => {
  const ts = await startTestStation({ configYaml: CONFIG });
  try {
    const port = Number(new URL(ts.station.url).port);
    const [headers, body, idle, second] = await Promise.all([
      // Headers that never end (slowloris): a header line now and then, never the blank line.
      converse(port, [HEAD, 400, "X-A: 1\r\n", 400, "X-B: 2\r\n"], BOUND_MS),
      // A body announced at 100 bytes of which 10 come.
      converse(port, [`${HEAD}Content-Length: 100\r\n\r\n`, '{"id": "w"'], BOUND_MS),
      // A whole request, answered; then nothing more on the kept-alive connection.
      converse(port, ["GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"], BOUND_MS),
      // A whole request, answered; then the next one's headers begin and never end.
      converse(port, ["GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 300, HEAD], BOUND_MS),
    ]);
    for (const [what, res] of [["partial headers", headers], ["stalled body", body]] as const) {
      assert(res.closed, `${what}: the server kept the connection open`);
      assertEquals(res.status, 408, `${what}: ${JSON.stringify(res)}`);
      assertEquals(JSON.parse(res.body).error.code, "request_timeout");
    }
    assert(idle.closed, "an idle kept-alive connection was kept open");
    assertEquals(idle.status, 200, "its request was answered first");
    assert(second.closed, "a second request's partial headers kept the connection open");
    assertEquals(second.status, 200);
    assertMatch(second.body, /HTTP\/1\.1 408 Request Timeout[^]*"request_timeout"/);

    // The stalled body is logged and counted as the 408 it got, not as a failure of the server.
    const metrics = await (await fetch(`${ts.station.url}/metrics`)).text();
    assert(
      /stn_http_request_duration_seconds_count\{method="POST",[^}]*status="408"\} [1-9]/.test(metrics),
      metrics.split("\n").filter((l) => l.includes('method="POST"')).join("\n"),
    );
  } finally {
    await ts.close();
  }
});

Deno.test("slow clients: a body that keeps flowing is never cut off, however long it takes in all", async () => {
  const ts = await startTestStation({ configYaml: CONFIG });
  try {
    const port = Number(new URL(ts.station.url).port);
    // 12 pieces 300 ms apart: about 3.6 s in all, over three times the idle limit, never idle for long.
    const pieces = WORKFLOW.match(/.{1,6}/gs)!;
    const parts = pieces.flatMap((piece) => [300, piece]);
    const res = await converse(
      port,
      [`${HEAD}Content-Length: ${WORKFLOW.length}\r\nConnection: close\r\n\r\n`, ...parts],
      BOUND_MS,
    );
    assertEquals(res.status, 200, JSON.stringify(res));
    assertEquals(JSON.parse(res.body).valid, true);
  } finally {
    await ts.close();
  }
});
