import {
  assert,
  assertEquals,
  assertMatch,
  assertStrictEquals,
  assertThrowsWith,
} from "../helpers/assert.ts";
import { Buffer } from "node:buffer";
import { encodeFrame, FieldReader, FieldWriter, FrameDecoder } from "../../src/sandbox/channel/protocol.ts";
import { ERROR_KIND, EXIT_FLAG, FRAME } from "../../src/sandbox/channel/protocol_table.ts";
import { refusal } from "../../src/sandbox/channel/refusals.ts";

Deno.test("channel protocol: frames survive any split of the stream; fields read back as written", () => {
  const payload = new FieldWriter().u8(7).u32(0xdeadbeef).u64(2 ** 40 + 3).str("héllo").str(
    new Uint8Array([0, 255]),
  )
    .bytes();
  const frames = [
    encodeFrame(FRAME.HELLO, 0, new FieldWriter().u32(1).u32(42).bytes()),
    encodeFrame(FRAME.PING, 7),
    encodeFrame(FRAME.DATA, 0xffffffff, payload),
  ];
  // The exact bytes of the header: u32 length (1 + 4 + payload), u8 type, u32 id.
  assertEquals([...frames[1]], [0, 0, 0, 5, 0x20, 0, 0, 0, 7]);
  const stream = Buffer.concat(frames);
  for (let a = 0; a <= stream.length; a++) {
    for (const b of [a, Math.min(stream.length, a + 3), stream.length]) {
      const decoder = new FrameDecoder();
      const got = [stream.subarray(0, a), stream.subarray(a, b), stream.subarray(b)].flatMap((c) =>
        decoder.push(c)
      );
      assertEquals(got.map((f) => [f.type, f.id]), [[FRAME.HELLO, 0], [FRAME.PING, 7], [
        FRAME.DATA,
        0xffffffff,
      ]]);
      assert(got[2].payload.equals(payload));
    }
  }
  const r = new FieldReader(payload);
  assertEquals([r.u8(), r.u32(), r.u64(), r.str()], [7, 0xdeadbeef, 2 ** 40 + 3, "héllo"]);
  assertStrictEquals(r.u32(), 2);
  assertThrowsWith(() => r.u32(), /past the end/);
  assertThrowsWith(() => new FrameDecoder().push(Buffer.from("OCI runtime exec failed")), /malformed frame/);
});

Deno.test("channel protocol: the supervisor's refusals become the errors the docker exec path gives", () => {
  const error = (kind: number, d1 = "", d2 = "") => new FieldWriter().u8(kind).str(d1).str(d2).bytes();
  const read = { op: "read" as const, path: "up/secret", target: "/workspace/up/secret", bytes: 10 };
  const cases: [
    Buffer,
    typeof read | { op: "delete"; path: string; target: string },
    string,
    number,
    RegExp,
  ][] = [
    [error(1), read, "file_not_found", 404, /up\/secret/],
    [error(2), read, "is_a_directory", 400, /is a directory, not a file/],
    [
      error(2),
      { op: "delete", path: "d", target: "/workspace/d" },
      "is_a_directory",
      400,
      /^\/workspace\/d is a/,
    ],
    [error(5, "99"), read, "file_too_large", 413, /is 99 bytes, over the 10-byte limit/],
    [error(6, "/workspace/up/secret", "Permission denied"), read, "file_unreadable", 403, /cannot be opened/],
    [
      error(7, "/workspace/up", "/"),
      read,
      "path_outside_workspace",
      400,
      /\/workspace\/up is a symlink \(to \/\)/,
    ],
    [
      error(8, "/workspace/up/secret", "/etc/shadow"),
      read,
      "not_a_file",
      400,
      /symlink \(to \/etc\/shadow\)/,
    ],
    [error(14, "3", "10"), read, "file_changed", 409, /shrank from 10 to 3 bytes/],
    [
      error(11, "reading the file", "I/O error"),
      read,
      "sandbox_command_failed",
      500,
      /\(io\): reading the file/,
    ],
  ];
  for (const [payload, req, code, status, message] of cases) {
    const e = refusal(payload, req);
    assertEquals([e.code, e.status], [code, status], e.message);
    assertMatch(e.message, message);
  }
});

Deno.test("channel protocol: the table gives every frame type and every ERROR kind its own number", () => {
  const distinct = (numbers: number[]) =>
    assertStrictEquals(new Set(numbers).size, numbers.length, String(numbers));
  distinct(Object.values(FRAME));
  distinct(Object.values(ERROR_KIND));
  distinct(Object.values(EXIT_FLAG));
  for (const code of Object.values(FRAME)) assert(code > 0 && code < 256, `${code} fits the type byte`);
});
