import { assert, assertEquals, assertRejectsWith, assertStrictEquals } from "../helpers/assert.ts";
import { getSha256Backend, Objm } from "@nats-io/obj";
import { jetstreamManager } from "@nats-io/jetstream";
import { StationError } from "../../src/errors.ts";
import { sleep } from "../../src/lib/async.ts";
import { startTestStation } from "../helpers/station.ts";
import { waitFor } from "../helpers/stn.ts";
import { checksumOf, collect, randomBytes, streamOf } from "./bytes.ts";

const CONFIG = `
storage:
  max_file_size: 2097152
  max_total_bytes: 8388608
  cleanup:
    interval: 200ms
`;

async function rejectsWith(p: Promise<unknown>, code: string, status: number): Promise<void> {
  await assertRejectsWith(p, (err: unknown) => {
    assert(err instanceof StationError, `expected a StationError, got ${err}`);
    assertStrictEquals(err.code, code);
    assertStrictEquals(err.status, status);
    return true;
  });
}

Deno.test("FileStore: put/get/head/list/delete with checksums, limits, TTL and the reaper", async (t) => {
  const ts = await startTestStation({ configYaml: CONFIG });
  const files = ts.station.ctx.files;
  try {
    await t.step("the object store digests with node:crypto, not its ~3x slower pure-JS default", () => {
      assertStrictEquals(getSha256Backend(), "native");
    });

    await t.step("round trip keeps bytes, checksum, type and metadata", async () => {
      for (const size of [0, 1, 200_000]) {
        const bytes = randomBytes(size);
        const key = `runs/r1/output/data-${size}.csv`;
        const info = await files.put(key, streamOf(bytes), { metadata: { owner: "ann" } });
        assertStrictEquals(info.key, key);
        assertStrictEquals(info.size_bytes, size);
        assertStrictEquals(info.checksum, checksumOf(bytes));
        assertStrictEquals(info.content_type, "text/csv");
        assertStrictEquals(info.expires_at, null);
        const got = await files.get(key);
        assertEquals(got.info, await files.head(key));
        assertEquals(got.info.metadata, { owner: "ann" });
        assertEquals(await collect(got.stream), bytes);
      }
    });

    await t.step("a range returns exactly those bytes", async () => {
      const bytes = randomBytes(300_000);
      await files.put("files/ranged.bin", streamOf(bytes, 7_777));
      const { stream } = await files.get("files/ranged.bin", { start: 131_000, end: 262_200 });
      assertEquals(await collect(stream), bytes.slice(131_000, 262_201));
    });

    await t.step("list pages by prefix with a cursor", async () => {
      for (const n of ["a", "b", "c"]) await files.put(`sessions/s1/${n}.txt`, streamOf(randomBytes(3)));
      const first = await files.list({ prefix: "sessions/s1/", limit: 2 });
      assertEquals(first.files.map((f) => f.key), ["sessions/s1/a.txt", "sessions/s1/b.txt"]);
      assert(first.next_cursor);
      const second = await files.list({ prefix: "sessions/s1/", limit: 2, cursor: first.next_cursor! });
      assertEquals(second.files.map((f) => f.key), ["sessions/s1/c.txt"]);
      assertStrictEquals(second.next_cursor, null);
    });

    await t.step(
      "listing leaves no consumer on the bucket's stream (a script may list in a loop)",
      async () => {
        const jsm = await jetstreamManager(ts.station.ctx.nats.nc);
        const consumers = async () => (await jsm.consumers.list(`OBJ_${files.bucket}`).next()).length;
        // The reaper sweeps every 200 ms here, through a consumer of its own while it reads: one may be there
        // at any instant, but it goes within the sweep. A consumer left behind stays for a minute.
        const settled = async (n: number) =>
          assert(await waitFor(async () => await consumers() === n, 5_000));
        await settled(0);
        for (let i = 0; i < 5; i++) await files.list({ prefix: "sessions/s1/" });
        await files.expired();
        await settled(0);
        // More entries than one fetch takes, all of them read.
        await Promise.all(
          Array.from({ length: 300 }, (_, i) => files.put(`bulk/${i}.txt`, streamOf(randomBytes(1)))),
        );
        assertStrictEquals((await files.list({ prefix: "bulk/" })).files.length, 300);
        await settled(0);
      },
    );

    await t.step(
      "an oversized stream is refused, leaves nothing and keeps the previous version",
      async () => {
        const before = await files.usage();
        await rejectsWith(
          files.put("files/big.bin", streamOf(randomBytes(3 * 1024 * 1024))),
          "file_too_large",
          413,
        );
        assertStrictEquals((await files.list({ prefix: "files/big" })).files.length, 0);
        assertStrictEquals(await files.usage(), before);
        await rejectsWith(
          files.put("files/big.bin", streamOf(new Uint8Array(1)), { size: 5_000_000 }),
          "file_too_large",
          413,
        );
        // A failed overwrite keeps the file that was there.
        const keep = randomBytes(10);
        await files.put("files/keep.bin", streamOf(keep));
        await rejectsWith(
          files.put("files/keep.bin", streamOf(randomBytes(3 * 1024 * 1024))),
          "file_too_large",
          413,
        );
        assertEquals(await collect((await files.get("files/keep.bin")).stream), keep);
      },
    );

    await t.step("the total quota answers 507", async () => {
      const keys: string[] = [];
      await assertRejectsWith(
        async () => {
          for (let i = 0; i < 10; i++) {
            await files.put(`files/fill-${i}`, streamOf(randomBytes(1_900_000)));
            keys.push(`files/fill-${i}`);
          }
        },
        (err: unknown) =>
          err instanceof StationError && err.code === "storage_quota_exceeded" && err.status === 507,
      );
      assert(keys.length >= 2 && keys.length < 5, `stored ${keys.length} before the quota`);
      assert(await files.usage() <= 8388608);
      for (const k of keys) await files.delete(k);
    });

    await t.step("invalid keys are 400 and unknown keys 404", async () => {
      for (
        const key of [
          "",
          "/etc/passwd",
          "a/../b",
          "..",
          "a//b",
          "a/",
          "bad\u0000key",
          "tab\tkey",
          "x".repeat(513),
        ]
      ) {
        await rejectsWith(files.put(key, streamOf(new Uint8Array(1))), "invalid_key", 400);
        await rejectsWith(files.head(key), "invalid_key", 400);
      }
      await rejectsWith(files.head("files/nope"), "file_not_found", 404);
      await rejectsWith(files.get("files/nope"), "file_not_found", 404);
      await rejectsWith(files.delete("files/nope"), "file_not_found", 404);
    });

    await t.step("a 1 s TTL is 404 after it, and the reaper removes the object", async () => {
      await files.put("files/short", streamOf(randomBytes(5)), { ttlMs: 1000 });
      assert((await files.head("files/short")).expires_at);
      const raw = await new Objm(ts.station.ctx.nats.nc).open(files.bucket);
      await sleep(1100);
      await rejectsWith(files.head("files/short"), "file_not_found", 404);
      assertStrictEquals((await files.list({ prefix: "files/short" })).files.length, 0);
      const deadline = Date.now() + 5000;
      let info = await raw.info("files/short");
      while (info && !info.deleted && Date.now() < deadline) {
        await sleep(100);
        info = await raw.info("files/short");
      }
      assert(!info || info.deleted, "the reaper did not delete the expired object");
    });
  } finally {
    await ts.close();
  }
});
