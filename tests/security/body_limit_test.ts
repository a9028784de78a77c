import { assert, assertEquals } from "../helpers/assert.ts";
import { tempHome } from "../helpers/home.ts";
import { peakRss } from "../helpers/memory.ts";
import { startServe } from "../helpers/stn.ts";
import { sendThenRead, sendWhileReading } from "./raw_http.ts";

const MiB = 1024 * 1024;

Deno.test("body limit: JSON bodies over server.max_body_bytes get 413 before they are buffered", async (t) => {
  // A real `stn serve` of its own, so its memory is measured apart from the test's. Its
  // server.max_body_bytes is the default, 4 MiB.
  const home = await tempHome();
  const serve = await startServe({ home: home.home, env: { ...home.env, STN_SANDBOX_ENABLED: "false" } });
  try {
    const port = Number(new URL(serve.url).port);

    await t.step("a declared 700 MB body is refused by its Content-Length", async () => {
      const res = await sendThenRead(
        port,
        `POST /api/v1/workflow-runs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
          `Content-Length: ${700 * 1000 * 1000}\r\n\r\n`,
        { chunk: new Uint8Array(64 * 1024).fill(32), count: 1, pauseMs: 0 },
      );
      assertEquals(res.status, 413);
      assertEquals(JSON.parse(res.body).error.code, "body_too_large");
    });

    await t.step("a chunked 256 MiB body is cut off after the limit; memory stays flat", async () => {
      const before = peakRss(serve.child.pid);
      const res = await sendWhileReading(
        port,
        "POST /api/v1/workflow-runs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" +
          "Transfer-Encoding: chunked\r\n\r\n",
        new Uint8Array(MiB).fill(32),
        256,
      );
      const peak = peakRss(serve.child.pid);
      const grewMiB = (peak - before) / MiB;
      console.log(
        `stn serve peak RSS before ${(before / MiB).toFixed(0)} MiB, after ${(peak / MiB).toFixed(0)} MiB ` +
          `(+${grewMiB.toFixed(0)} MiB) while ${(res.sent / MiB).toFixed(0)} MiB were sent`,
      );
      assertEquals(res.status, 413);
      assertEquals(JSON.parse(res.body).error.code, "body_too_large");
      // Unbounded, the server held the body as bytes and again as text: about +770 MiB for this one.
      assert(grewMiB < 160, `the server grew by ${grewMiB.toFixed(0)} MiB`);
    });

    await t.step("a body under the limit is served; file uploads keep their own, larger limits", async () => {
      const ok = await fetch(`${serve.url}/api/v1/workflows/validate`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ id: "small", states: [{ id: "a", type: "inject", data: { x: 1 } }] }),
      });
      assertEquals([ok.status, (await ok.json()).valid], [200, true]);
      // The same body sent chunked (a stream, no Content-Length) is read up to the limit and served.
      const definition = JSON.stringify({
        id: "small",
        states: [{ id: "a", type: "inject", data: { x: 1 } }],
      });
      const chunked = await fetch(`${serve.url}/api/v1/workflows/validate`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: new Blob([definition]).stream(),
      });
      assertEquals([chunked.status, (await chunked.json()).valid], [200, true]);
      const put = await fetch(`${serve.url}/api/v1/files/files/six-mib.bin`, {
        method: "PUT",
        body: new Uint8Array(6 * MiB),
      });
      assertEquals([put.status, (await put.json()).size_bytes], [201, 6 * MiB]);
    });
  } finally {
    await serve.stop();
    await home.cleanup();
  }
});
