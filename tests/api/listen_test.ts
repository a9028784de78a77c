import { listen } from "../../src/server/listen.ts";
import { StationError } from "../../src/errors.ts";
import { assertEquals, assertRejects } from "../helpers/assert.ts";
import { within } from "../../src/lib/async.ts";

/** The slow-client limits off: these tests are about closing and port clashes. */
const NO_TIMEOUTS = { headerMs: 0, bodyIdleMs: 0 };

/** A response whose body comes in two parts; the second waits for `then`. */
function streamed(then: Promise<void>): Response {
  const enc = new TextEncoder();
  return new Response(
    new ReadableStream<Uint8Array>({
      async start(c) {
        c.enqueue(enc.encode("first "));
        await then;
        c.enqueue(enc.encode("last"));
        c.close();
      },
    }),
  );
}

Deno.test("close: a request in flight finishes first, then its connection is closed", async () => {
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const server = await listen(() => streamed(released), "127.0.0.1", 0, NO_TIMEOUTS);
  const res = await fetch(`http://127.0.0.1:${server.port}/`);
  const closed = server.close();
  release();
  assertEquals(await res.text(), "first last");
  assertEquals(
    await within(closed, 10_000, () => "timeout"),
    undefined,
    "close() waited on an idle connection",
  );
});

Deno.test("listen: a port in use is a port_in_use error with a hint", async () => {
  const first = await listen(() => new Response("ok"), "127.0.0.1", 0, NO_TIMEOUTS);
  try {
    const err = await assertRejects(
      () => listen(() => new Response("ok"), "127.0.0.1", first.port, NO_TIMEOUTS),
      StationError,
    );
    assertEquals((err as StationError).code, "port_in_use");
  } finally {
    await first.close();
  }
});
