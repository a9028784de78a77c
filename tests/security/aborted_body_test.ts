import { assert, assertEquals } from "../helpers/assert.ts";
import { startTestStation } from "../helpers/station.ts";
import { converse } from "./raw_http.ts";

const HEAD =
  "POST /api/v1/workflows/validate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n";

/** The request counts by status in the station's /metrics (all methods). */
async function counts(url: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const counts: Record<string, number> = {};
  for (
    const m of text.matchAll(
      /stn_http_request_duration_seconds_count\{[^}]*status="(\d+)"\} (\d+)/g,
    )
  ) {
    counts[m[1]] = (counts[m[1]] ?? 0) + Number(m[2]);
  }
  return counts;
}

Deno.test("bodies: a malformed chunked body and bodies the client cuts off are counted as the 4xx they are, never as a 500", async () => {
  const ts = await startTestStation();
  try {
    const url = ts.station.url;
    const port = Number(new URL(url).port);
    const before = await counts(url);
    // A chunk size that is not hex: the wire gets 400 bad_request.
    const malformed = await converse(
      port,
      [`${HEAD}Transfer-Encoding: chunked\r\n\r\n`, '5\r\n{"id"\r\n', 100, "ZZZ\r\nxx\r\n"],
      10_000,
    );
    assertEquals(malformed.status, 400, JSON.stringify(malformed));
    assertEquals(JSON.parse(malformed.body).error.code, "bad_request");
    // A body announced at 100 bytes; the client sends 10 and goes away.
    const cut = await converse(port, [`${HEAD}Content-Length: 100\r\n\r\n`, '{"id": "w"'], 300);
    assert(!cut.closed, "the server closed the connection before the client went away");
    // A chunked body the client gives up on halfway.
    await converse(port, [`${HEAD}Transfer-Encoding: chunked\r\n\r\n`, '5\r\n{"id"\r\n'], 300);

    // A file upload cut off halfway.
    await converse(
      port,
      [
        "PUT /api/v1/files/cut.bin HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100000\r\n\r\n",
        "0123456789",
      ],
      300,
    );

    let after: Record<string, number> = {};
    for (let i = 0; i < 50; i++) { // the access line is written when the handler has seen the socket close
      after = await counts(url);
      if ((after["400"] ?? 0) - (before["400"] ?? 0) >= 4) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    assertEquals((after["500"] ?? 0) - (before["500"] ?? 0), 0, `counted as 500: ${JSON.stringify(after)}`);
    assertEquals((after["400"] ?? 0) - (before["400"] ?? 0), 4, `counts: ${JSON.stringify(after)}`);
    assertEquals((await ts.station.ctx.files.list()).files.length, 0, "nothing of the cut upload was kept");
  } finally {
    await ts.close();
  }
});
