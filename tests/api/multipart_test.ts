import { assert, assertEquals, assertRejectsWith, assertStrictEquals } from "../helpers/assert.ts";
import { multipartBoundary, multipartParts, partText } from "../../src/api/multipart.ts";
import { StationError } from "../../src/errors.ts";
import { collect, randomBytes, streamOf } from "../files/bytes.ts";

async function encode(form: FormData): Promise<{ body: Uint8Array; boundary: string }> {
  const req = new Request("http://x/", { method: "POST", body: form });
  const boundary = multipartBoundary(req.headers.get("content-type")!);
  assert(boundary);
  return { body: new Uint8Array(await req.arrayBuffer()), boundary };
}

Deno.test("multipart: parts survive any chunking, including near-delimiters in the content", async () => {
  // Near-delimiters inside the content must not end the part.
  const near = new TextEncoder().encode("\r\n--\r\n-\r\n--x");
  const file = new Uint8Array([...randomBytes(10_000), ...near, ...randomBytes(10_000), ...near]);
  const form = new FormData();
  form.append("key", "runs/1/output/x");
  form.append("empty", "");
  form.append("file", new File([file], 'a "q".bin', { type: "image/png" }));
  form.append("zero", new File([], "zero.bin"));
  const { body, boundary } = await encode(form);
  for (const chunk of [1, 7, 45, 64, 65, 4096, body.length]) {
    const seen: { name: string; filename?: string; contentType?: string; bytes: Uint8Array }[] = [];
    for await (const part of multipartParts(streamOf(body, chunk), boundary)) {
      seen.push({
        name: part.name,
        filename: part.filename,
        contentType: part.contentType,
        bytes: await collect(part.body),
      });
    }
    assertEquals(seen.map((p) => p.name), ["key", "empty", "file", "zero"]);
    assertStrictEquals(new TextDecoder().decode(seen[0].bytes), "runs/1/output/x");
    assertStrictEquals(seen[1].bytes.length, 0);
    assertEquals(seen[2].bytes, file);
    assertStrictEquals(seen[2].contentType, "image/png");
    assertStrictEquals(seen[3].bytes.length, 0);
    assertStrictEquals(seen[3].filename, "zero.bin");
  }
});

Deno.test("multipart: unread parts are skipped, and a truncated body is a 400", async () => {
  const form = new FormData();
  form.append("skip", new File([randomBytes(50_000)], "s.bin"));
  form.append("note", "hello");
  const { body, boundary } = await encode(form);
  const texts: string[] = [];
  for await (const part of multipartParts(streamOf(body, 1000), boundary)) {
    if (part.name === "note") texts.push(await partText(part));
  }
  assertEquals(texts, ["hello"]);

  await assertRejectsWith(async () => {
    for await (const part of multipartParts(streamOf(body.slice(0, 30_000)), boundary)) {
      await collect(part.body);
    }
  }, (err: unknown) => err instanceof StationError && err.status === 400 && err.code === "invalid_request");
});
