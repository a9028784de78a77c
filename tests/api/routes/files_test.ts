import { assert, assertEquals, assertMatch, assertStrictEquals } from "../../helpers/assert.ts";
import { startTestStation } from "../../helpers/station.ts";
import { checksumOf, collect, randomBytes } from "../../files/bytes.ts";

const MiB = 1024 * 1024;
const CONFIG = `
storage:
  max_file_size: ${160 * MiB}
`;

/** Encodes a key for a URL path segment by segment (so "/" stays a separator). */
const path = (key: string) => "/api/v1/files/" + key.split("/").map(encodeURIComponent).join("/");

Deno.test("files API: PUT, multipart POST, GET, HEAD, Range, list and DELETE over real HTTP", async (t) => {
  const ts = await startTestStation({ configYaml: CONFIG });
  const base = ts.station.url;
  const req = (method: string, p: string, init: RequestInit = {}) => fetch(base + p, { ...init, method });
  try {
    await t.step("PUT round trips of 0 B, 1 B, 1 MiB and 150 MiB, keys with /", async () => {
      for (const size of [0, 1, MiB, 150 * MiB]) {
        const bytes = randomBytes(size);
        const key = `runs/run-1/output/blob-${size}.bin`;
        const put = await req("PUT", path(key), { body: bytes });
        assertStrictEquals(put.status, 201);
        const res = await put.json();
        assertEquals(res, {
          file_key: key,
          size_bytes: size,
          content_type: "application/octet-stream",
          checksum: checksumOf(bytes),
          expires_at: null,
        });
        const get = await req("GET", path(key));
        assertStrictEquals(get.status, 200);
        assertStrictEquals(get.headers.get("content-length"), String(size));
        assertStrictEquals(get.headers.get("x-checksum-sha256"), checksumOf(bytes).slice(7));
        assertStrictEquals(get.headers.get("etag"), `"${checksumOf(bytes).slice(7)}"`);
        const got = new Uint8Array(await get.arrayBuffer());
        assertStrictEquals(got.length, size);
        assertStrictEquals(checksumOf(got), checksumOf(bytes));
      }
    });

    await t.step("multipart POST generates files/f_<ULID>, reads key, ttl and metadata fields", async () => {
      const bytes = randomBytes(300_000);
      const form = new FormData();
      form.append("file", new File([bytes], "data.csv", { type: "text/csv" }));
      const res = await req("POST", "/api/v1/files", { body: form });
      assertStrictEquals(res.status, 201);
      const up = await res.json();
      assertMatch(up.file_key, /^files\/f_[0-9A-HJKMNP-TV-Z]{26}$/);
      assertStrictEquals(up.content_type, "text/csv");
      assertStrictEquals(up.checksum, checksumOf(bytes));
      // The bare id reaches the same file.
      const short = up.file_key.slice("files/".length);
      assertEquals(new Uint8Array(await (await req("GET", path(short))).arrayBuffer()), bytes);

      const form2 = new FormData();
      form2.append("key", "sessions/s-9/notes/a b.txt");
      form2.append("ttl", "1h");
      form2.append("metadata", JSON.stringify({ owner: "ann" }));
      form2.append("file", new File([bytes], "ignored-name.bin"));
      const res2 = await req("POST", "/api/v1/files", { body: form2 });
      assertStrictEquals(res2.status, 201);
      const up2 = await res2.json();
      assertStrictEquals(up2.file_key, "sessions/s-9/notes/a b.txt");
      const ttlLeft = Date.parse(up2.expires_at) - Date.now();
      assert(ttlLeft > 3_500_000 && ttlLeft <= 3_600_000, `expires in ${ttlLeft} ms`);
      const info = await (await req("GET", path(up2.file_key) + "?info")).json();
      assertEquals(info.metadata, { owner: "ann" });
      assertStrictEquals(info.filename, "ignored-name.bin");
      assertStrictEquals(info.checksum, checksumOf(bytes));
    });

    await t.step("HEAD carries the headers and no body; Range returns 206 with the slice", async () => {
      const bytes = randomBytes(400_000);
      await (await req("PUT", path("files/r.bin"), { body: bytes })).body?.cancel();
      const head = await req("HEAD", path("files/r.bin"));
      assertStrictEquals(head.status, 200);
      assertStrictEquals(head.headers.get("content-length"), "400000");
      assertStrictEquals(head.headers.get("x-checksum-sha256"), checksumOf(bytes).slice(7));
      assertStrictEquals((await head.arrayBuffer()).byteLength, 0);
      const part = await req("GET", path("files/r.bin"), { headers: { range: "bytes=131070-300000" } });
      assertStrictEquals(part.status, 206);
      assertStrictEquals(part.headers.get("content-range"), "bytes 131070-300000/400000");
      assertEquals(new Uint8Array(await part.arrayBuffer()), bytes.slice(131070, 300001));
      const tail = await req("GET", path("files/r.bin"), { headers: { range: "bytes=-10" } });
      assertEquals(new Uint8Array(await tail.arrayBuffer()), bytes.slice(-10));
      const bad = await req("GET", path("files/r.bin"), { headers: { range: "bytes=500000-" } });
      assertStrictEquals(bad.status, 416);
      await bad.body?.cancel();
    });

    await t.step("list with prefix, limit and cursor", async () => {
      for (const n of ["1", "2", "3"]) {
        await (await req("PUT", path(`runs/L/output/${n}`), { body: n })).body?.cancel();
      }
      const page1 = await (await req("GET", "/api/v1/files?prefix=runs/L/&limit=2")).json();
      assertEquals(page1.files.map((f: { key: string }) => f.key), [
        "runs/L/output/1",
        "runs/L/output/2",
      ]);
      const page2 = await (await req(
        "GET",
        `/api/v1/files?prefix=runs/L/&limit=2&cursor=${encodeURIComponent(page1.next_cursor)}`,
      )).json();
      assertEquals(page2.files.map((f: { key: string }) => f.key), ["runs/L/output/3"]);
      assertStrictEquals(page2.next_cursor, null);
    });

    await t.step("DELETE removes the file", async () => {
      const del = await req("DELETE", path("files/r.bin"));
      assertEquals(await del.json(), { deleted: "files/r.bin" });
      assertStrictEquals((await req("HEAD", path("files/r.bin"))).status, 404);
    });
  } finally {
    await ts.close();
  }
});

Deno.test("files API errors: invalid keys 400, unknown 404, oversize 413 leaving no trace, quota 507", async (t) => {
  const ts = await startTestStation({
    configYaml: `storage:\n  max_file_size: ${4 * MiB}\n  max_total_bytes: ${10 * MiB}\n`,
  });
  const base = ts.station.url;
  const req = (method: string, p: string, init: RequestInit = {}) => fetch(base + p, { ...init, method });
  try {
    await t.step("each error answers its status and code", async () => {
      const invalid = [
        "..%2Fetc%2Fpasswd",
        "%2Fetc%2Fpasswd",
        "",
        "a%00b",
        "a%0Ab",
        "x".repeat(600),
        "a%2F%2Fb",
      ];
      for (const raw of invalid) {
        const res = await req("PUT", "/api/v1/files/" + raw, { body: "x" });
        const body = await res.json();
        assertStrictEquals(res.status, 400, raw);
        assertStrictEquals(body.error.code, "invalid_key");
        assert(body.error.hint);
      }
      const missing = await req("GET", path("files/does-not-exist"));
      assertStrictEquals(missing.status, 404);
      assertStrictEquals((await missing.json()).error.code, "file_not_found");
      const del = await req("DELETE", path("files/does-not-exist"));
      assertStrictEquals(del.status, 404);
      await del.body?.cancel();

      // Streamed (no length known up front): refused once the limit is crossed.
      const big = randomBytes(5 * MiB);
      let sent = 0;
      const stream = new ReadableStream<Uint8Array>({
        pull(c) {
          if (sent >= big.length) return c.close();
          c.enqueue(big.subarray(sent, sent + MiB));
          sent += MiB;
        },
      });
      const over = await req("PUT", path("files/too-big.bin"), { body: stream });
      assertStrictEquals(over.status, 413);
      assertStrictEquals((await over.json()).error.code, "file_too_large");
      const list = await (await req("GET", "/api/v1/files?prefix=files/too-big")).json();
      assertStrictEquals(list.files.length, 0);
      assertStrictEquals((await req("HEAD", path("files/too-big.bin"))).status, 404);

      // Known length: refused before a byte is stored.
      const known = await req("PUT", path("files/too-big-2.bin"), { body: big });
      assertStrictEquals(known.status, 413);
      await known.body?.cancel();

      // The quota (10 MiB) is exceeded by the third 4 MiB file.
      const chunk = big.subarray(0, 4 * MiB);
      for (const n of [1, 2]) {
        const r = await req("PUT", path(`files/q${n}`), { body: chunk });
        assertStrictEquals(r.status, 201);
        await r.body?.cancel();
      }
      const r3 = await req("PUT", path("files/q3"), { body: chunk });
      assertStrictEquals(r3.status, 507);
      const b3 = await r3.json();
      assertStrictEquals(b3.error.code, "storage_quota_exceeded");
      assert(b3.error.hint);
    });
  } finally {
    await ts.close();
  }
});

Deno.test("files API: ten concurrent uploads and downloads stay intact", async () => {
  const ts = await startTestStation();
  try {
    const blobs = Array.from({ length: 10 }, (_, i) => randomBytes(500_000 + i * 100_003));
    await Promise.all(blobs.map(async (b, i) => {
      const res = await fetch(`${ts.station.url}${path(`files/c/${i}`)}`, { method: "PUT", body: b });
      assertStrictEquals(res.status, 201);
      assertStrictEquals((await res.json()).checksum, checksumOf(b));
    }));
    const got = await Promise.all(blobs.map(async (_, i) => {
      const res = await fetch(`${ts.station.url}${path(`files/c/${i}`)}`);
      return await collect(res.body!);
    }));
    got.forEach((g, i) => assertStrictEquals(checksumOf(g), checksumOf(blobs[i])));
  } finally {
    await ts.close();
  }
});
