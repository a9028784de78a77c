import {
  assertEquals,
  assertMatch,
  assertNotStrictEquals,
  assertRejectsWith,
  assertStrictEquals,
} from "../../helpers/assert.ts";
import { join } from "node:path";
import { jetstream } from "@nats-io/jetstream";
import { headers } from "@nats-io/transport-node";
import { startTestStation } from "../../helpers/station.ts";
import { runStn } from "../../helpers/stn.ts";
import { checksumOf, randomBytes } from "../../files/bytes.ts";

const KEY = "damaged/blob.bin";

/** Rewrites a stored object's metadata so that its recorded digest no longer matches its bytes. */
async function damageDigest(station: Awaited<ReturnType<typeof startTestStation>>["station"]): Promise<void> {
  const js = jetstream(station.ctx.nats.nc);
  const bucket = station.ctx.files.bucket;
  const subject = `$O.${bucket}.M.${btoa(KEY).replace(/\+/g, "-").replace(/\//g, "_")}`;
  const jsm = await js.jetstreamManager();
  const meta = (await jsm.streams.getMessage(`OBJ_${bucket}`, { last_by_subj: subject }))!.json<
    Record<string, unknown>
  >();
  const h = headers();
  h.set("Nats-Rollup", "sub");
  // The SHA-256 of other bytes, in the store's own form.
  const other = new Uint8Array(await crypto.subtle.digest("SHA-256", new Uint8Array([1])));
  const b64 = btoa(String.fromCharCode(...other)).replace(/\+/g, "-").replace(/\//g, "_");
  await js.publish(subject, JSON.stringify({ ...meta, digest: `SHA-256=${b64}` }), { headers: h });
}

Deno.test("a download whose bytes do not match the stored checksum fails on the server's check or the CLI's", async (t) => {
  const ts = await startTestStation();
  const url = (p = "") => `${ts.station.url}/api/v1/files/${KEY}${p}`;
  const bytes = randomBytes(3 * 128 * 1024 + 5);
  const work = await Deno.makeTempDir({ prefix: "stn-files-checksum-" });
  try {
    assertStrictEquals((await fetch(url(), { method: "PUT", body: bytes })).status, 201);
    await damageDigest(ts.station);
    const stated = (await (await fetch(url("?info"))).json()).checksum;
    assertNotStrictEquals(stated, checksumOf(bytes));

    await t.step("a plain GET is cut off: the server checks the bytes as they stream", async () => {
      const res = await fetch(url());
      assertStrictEquals(res.status, 200);
      await assertRejectsWith(res.arrayBuffer());
    });

    await t.step("with X-Checksum-Verify: client the server sends the bytes as they are", async () => {
      const res = await fetch(url(), { headers: { "x-checksum-verify": "client" } });
      assertStrictEquals(res.headers.get("x-checksum-sha256"), stated.slice(7));
      assertStrictEquals(checksumOf(new Uint8Array(await res.arrayBuffer())), checksumOf(bytes));
      const bad = await fetch(url(), { headers: { "x-checksum-verify": "server" } });
      assertStrictEquals(bad.status, 400);
      await bad.body?.cancel();
    });

    await t.step(
      "stn files download (which sends that header) checks them itself and keeps no file",
      async () => {
        const out = join(work, "blob.bin");
        const r = await runStn(["files", "download", KEY, "-o", out], {
          env: { STATION_URL: ts.station.url },
        });
        assertStrictEquals(r.code, 1, r.stderr);
        assertMatch(r.stderr, /downloaded bytes do not match the stored checksum/);
        assertEquals([...Deno.readDirSync(work)], []);
      },
    );
  } finally {
    await ts.close();
    await Deno.remove(work, { recursive: true });
  }
});
