import { join } from "node:path";
import { Objm } from "@nats-io/obj";
import { uploadFile } from "../../src/client/files.ts";
import { StationError } from "../../src/errors.ts";
import { objectName, validateKey } from "../../src/files/keys.ts";
import { assert, assertEquals, assertMatch, assertThrows } from "../helpers/assert.ts";
import { startTestStation } from "../helpers/station.ts";
import { tempHome } from "../helpers/home.ts";
import { runStn } from "../helpers/stn.ts";

const enc = (key: string) => key.split("/").map(encodeURIComponent).join("/");

Deno.test("unicode keys: PUT, GET, HEAD, list and DELETE of keys beyond Latin-1", async () => {
  const ts = await startTestStation();
  const api = `${ts.station.url}/api/v1/files/`;
  try {
    for (const key of ["files/日本", "runs/r1/output/отчёт (1).csv", "sessions/s1/🙂/ok.txt"]) {
      const put = await fetch(api + enc(key), { method: "PUT", body: `bytes of ${key}` });
      assertEquals(put.status, 201, await put.clone().text());
      assertEquals((await put.json()).file_key, key);

      const get = await fetch(api + enc(key));
      assertEquals(get.status, 200);
      assertEquals(await get.text(), `bytes of ${key}`);
      const name = key.slice(key.lastIndexOf("/") + 1);
      const disposition = get.headers.get("content-disposition")!;
      const star = /filename\*=UTF-8''([^;]+)/.exec(disposition)?.[1];
      assertEquals(decodeURIComponent(star ?? ""), name, disposition);
      assertMatch(disposition, /filename="[\x20-\x7e]*"/);

      const head = await fetch(api + enc(key), { method: "HEAD" });
      assertEquals(head.status, 200);
      await head.body?.cancel();
      const info = await (await fetch(api + enc(key) + "?info")).json();
      assertEquals(info.key, key);
    }
    const list =
      await (await fetch(`${ts.station.url}/api/v1/files?prefix=${encodeURIComponent("files/日")}`))
        .json();
    assertEquals(list.files.map((f: { key: string }) => f.key), ["files/日本"]);
    const del = await fetch(api + enc("files/日本"), { method: "DELETE" });
    assertEquals(del.status, 200);
    await del.body?.cancel();
    const gone = await fetch(api + enc("files/日本"));
    assertEquals(gone.status, 404);
    await gone.body?.cancel();
  } finally {
    await ts.close();
  }
});

Deno.test("unicode keys: stored as their UTF-8 bytes, Latin-1 keys as before; ambiguous keys are refused", async () => {
  const ts = await startTestStation();
  const api = `${ts.station.url}/api/v1/files/`;
  try {
    const raw = await new Objm(ts.station.ctx.nats.nc).open(ts.station.ctx.files.bucket);
    // A Latin-1 key keeps its own name in the object store (so files stored before stay where they were).
    const latin = await fetch(api + enc("files/café"), { method: "PUT", body: "latin" });
    assertEquals(latin.status, 201);
    await latin.body?.cancel();
    assertEquals((await raw.info("files/café"))?.size, 5);
    // A key beyond Latin-1 is stored under its UTF-8 bytes (the subject nats.go derives for it).
    const put = await fetch(api + enc("files/日本"), { method: "PUT", body: "nihon" });
    await put.body?.cancel();
    assertEquals(objectName("files/日本"), "files/\u00e6\u0097\u00a5\u00e6\u009c\u00ac");
    assertEquals((await raw.info(objectName("files/日本")))?.size, 5);

    // "files/Ä°" is the UTF-8 of "files/İ" read as Latin-1: the store could not tell them apart.
    const res = await fetch(api + enc("files/Ä°"), { method: "PUT", body: "x" });
    assertEquals(res.status, 400);
    assertEquals((await res.json()).error.code, "invalid_key");
    assertEquals(
      assertThrows(() => validateKey("files/a\ud800b"), StationError).message.includes("Unicode"),
      true,
    );
    const badType = await fetch(api + "files/t.txt", {
      method: "PUT",
      body: "x",
      headers: { "content-type": "text/plain; name=\u00e9" },
    });
    assertEquals(badType.status, 400, "a content type must fit in a response header as it is");
    assertEquals((await badType.json()).error.code, "invalid_request");
  } finally {
    await ts.close();
  }
});

Deno.test("unicode names: an upload named 日本.txt downloads over the API and through the CLI", async () => {
  const ts = await startTestStation();
  try {
    // Stored as every earlier version stored it: the name in the object's description.
    const up = await uploadFile(ts.client, new Blob(["hello"]).stream(), {
      filename: "日本 (1)'s.txt",
      contentType: "text/plain",
    });
    const res = await fetch(`${ts.station.url}/api/v1/files/${up.file_key}`);
    assertEquals(res.status, 200);
    assertEquals(await res.text(), "hello");
    const disposition = res.headers.get("content-disposition")!;
    assertEquals(
      disposition,
      `attachment; filename="__ (1)'s.txt"; filename*=UTF-8''%E6%97%A5%E6%9C%AC%20%281%29%27s.txt`,
    );
    const head = await fetch(`${ts.station.url}/api/v1/files/${up.file_key}`, { method: "HEAD" });
    assertEquals(head.status, 200);
    await head.body?.cancel();
    // A content type that is not a header value is refused before anything is stored.
    const bad = await uploadFile(ts.client, new Blob(["x"]).stream(), { contentType: "text/日本" })
      .then(() => undefined, (e) => e);
    assertEquals([bad?.status, bad?.code], [400, "invalid_request"]);
  } finally {
    await ts.close();
  }
});

Deno.test("unicode names: `stn files upload 日本.txt` then `stn files download` writes 日本.txt", async () => {
  const home = await tempHome();
  const work = await Deno.makeTempDir({ prefix: "stn-unicode-" });
  try {
    const src = join(work, "日本.txt");
    await Deno.writeTextFile(src, "konnichiwa");
    const up = await runStn(["files", "upload", src, "--json"], { env: home.env });
    assertEquals(up.code, 0, up.stderr);
    const key = JSON.parse(up.stdout).file_key;
    const out = join(work, "out");
    await Deno.mkdir(out);
    const down = await runStn(["files", "download", key], { env: home.env, cwd: out });
    assertEquals(down.code, 0, down.stderr);
    assertEquals(await Deno.readTextFile(join(out, "日本.txt")), "konnichiwa");

    const keyed = await runStn(["files", "upload", src, "--key", "files/日本/レポート.txt"], {
      env: home.env,
    });
    assertEquals(keyed.code, 0, keyed.stderr);
    const info = await runStn(["files", "info", "files/日本/レポート.txt", "--json"], { env: home.env });
    assertEquals(info.code, 0, info.stderr);
    assertEquals(JSON.parse(info.stdout).key, "files/日本/レポート.txt");
    assert(!info.stderr.includes("ByteString"));
  } finally {
    await Deno.remove(work, { recursive: true });
    await home.cleanup();
  }
});
