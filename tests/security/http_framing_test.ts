import { assert, assertEquals } from "../helpers/assert.ts";
import { startTestStation } from "../helpers/station.ts";
import { sendThenRead } from "./raw_http.ts";

Deno.test("http: oversized headers get 431 with the error body, not an empty answer", async () => {
  const ts = await startTestStation();
  try {
    const port = Number(new URL(ts.station.url).port);
    const res = await sendThenRead(
      port,
      `GET /api/v1/version HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`,
      undefined,
    );
    assertEquals(res.status, 431);
    assertEquals(res.headers["content-type"], "application/json");
    assertEquals(JSON.parse(res.body).error.code, "headers_too_large");
    const bad = await sendThenRead(port, "GET /health HTTP/1.1\r\nHost x\r\n\r\n", undefined);
    assertEquals(bad.status, 400);
    assertEquals(JSON.parse(bad.body).error.code, "bad_request");
  } finally {
    await ts.close();
  }
});

Deno.test("http: a 507 on a sized PUT reaches a client that sends its whole body before reading", async () => {
  const ts = await startTestStation({ configYaml: "storage:\n  max_total_bytes: 1000000\n" });
  try {
    const port = Number(new URL(ts.station.url).port);
    const chunk = new Uint8Array(256 * 1024);
    const count = 40; // 10 MiB over about 2 s: well past the 500 ms node-server drains before it resets
    const res = await sendThenRead(
      port,
      `PUT /api/v1/files/files/too-big.bin HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: ${
        chunk.length * count
      }\r\n\r\n`,
      { chunk, count, pauseMs: 50 },
    );
    assertEquals(res.status, 507, `answer: ${JSON.stringify(res)}`);
    assertEquals(JSON.parse(res.body).error.code, "storage_quota_exceeded");
    assert(res.error === undefined, `the upload was cut off: ${res.error}`);
    assertEquals((await ts.station.ctx.files.list()).files.length, 0, "nothing was stored");
  } finally {
    await ts.close();
  }
});
