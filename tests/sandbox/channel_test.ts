import {
  assert,
  assertEquals,
  assertMatch,
  assertNotMatch,
  assertRejectsWith,
  assertStrictEquals,
} from "../helpers/assert.ts";
import { Readable } from "node:stream";
import type { StationError } from "../../src/errors.ts";
import { sleep } from "../../src/lib/async.ts";
import { setLogLevel } from "../../src/log.ts";
import type { DockerBackend } from "../../src/sandbox/docker.ts";
import { asRoot } from "../security/sandbox_helpers.ts";
import { MODES, readAll, testBackend, testInBothModes, testLabels } from "./backend.ts";
import { BUSYBOX } from "./images.ts";

const EXEC = { timeoutMs: 30_000, maxOutputBytes: 1024 * 1024 };
const [CHANNEL, DOCKER_EXEC] = MODES;
// Prints the command line of the command's grandparent: over the channel, the shim's parent is the supervisor.
const GRANDPARENT = "tr '\\0' ' ' < /proc/$(cut -d' ' -f4 /proc/$PPID/stat)/cmdline";

/** How many Docker execs the engine created in the container since `since` (unix seconds). */
async function execsCreated(backend: DockerBackend, id: string, since: number): Promise<number> {
  const stream = await backend.docker.getEvents({
    since,
    until: Math.ceil(Date.now() / 1000),
    filters: { container: [id], event: ["exec_create"] },
  }) as unknown as AsyncIterable<Uint8Array>;
  let text = "";
  for await (const chunk of stream) text += new TextDecoder().decode(chunk);
  return text.split("\n").filter((line) => line.trim() !== "").length;
}

/** Runs fn with what stn logs collected (the log writes lines to stderr). */
async function withLogs<T>(fn: (lines: string[]) => Promise<T>): Promise<T> {
  const lines: string[] = [];
  const original = console.error;
  setLogLevel("info");
  console.error = (...args: unknown[]) => lines.push(args.join(" "));
  try {
    return await fn(lines);
  } finally {
    console.error = original;
  }
}

/** Every operation once: exec, write, read, list, delete. */
async function everyOperation(backend: DockerBackend, id: string): Promise<void> {
  assertStrictEquals((await backend.exec(id, { ...EXEC, cmd: ["true"] })).exit_code, 0);
  await backend.writeFile(id, "op.txt", { data: new TextEncoder().encode("op"), size: 2 });
  assertStrictEquals((await readAll((await backend.readFile(id, "op.txt", 10)).stream)).toString(), "op");
  assertEquals((await backend.list(id, ".", false)).map((e) => e.path), ["op.txt"]);
  await backend.delete(id, "op.txt", false);
}

Deno.test("sandbox channel: operations go through the supervisor, not one Docker exec each", async () => {
  for (const mode of MODES) {
    const backend = testBackend(mode);
    const id = await backend.create({ image: BUSYBOX, network: false, labels: testLabels("channel_used") });
    try {
      const since = Math.floor(Date.now() / 1000) - 1;
      for (let i = 0; i < 3; i++) await everyOperation(backend, id);
      const ancestor = await backend.exec(id, { ...EXEC, cmd: GRANDPARENT });
      const created = await execsCreated(backend, id, since);
      if (mode.channel) {
        assertStrictEquals(ancestor.stdout.trim(), "/.stn/supervisor-v1");
        assertStrictEquals(created, 1, "only the supervisor's own exec"); // 16 operations
      } else {
        assertNotMatch(ancestor.stdout, /supervisor/);
        assert(created >= 16, `${created} execs for 16 operations`);
      }
      // The supervisor is root's and read-only, in root's directory: the sandbox user cannot replace it.
      const stat = await backend.exec(id, {
        ...EXEC,
        cmd: "stat -c '%u:%g %a' /.stn /.stn/supervisor-v1; touch /.stn/x 2>&1 || echo refused",
      });
      assertMatch(stat.stdout, /^0:0 755\n0:0 555\n.*Permission denied\nrefused\n$/);
    } finally {
      await backend.destroy(id);
    }
  }
});

Deno.test("sandbox channel: a command that kills the supervisor fails, leaves no process, the next operation falls back and the channel comes back", async () => {
  const backend = testBackend(CHANNEL, { channelRetryMs: 1_000 });
  const id = await backend.create({ image: BUSYBOX, network: false, labels: testLabels("channel_lost") });
  try {
    await withLogs(async (logs) => {
      const pid = (await backend.exec(id, { ...EXEC, cmd: "cut -d' ' -f4 /proc/$PPID/stat" })).stdout.trim();
      // A command running during the loss (and its double-forked child) and the one that kills it.
      const running = backend.exec(id, { ...EXEC, cmd: "(setsid sleep 331 &); sleep 332" });
      await sleep(200);
      const killer = backend.exec(id, { ...EXEC, cmd: `kill -9 ${pid}; sleep 333` });
      for (const lost of [running, killer]) {
        await assertRejectsWith(lost, (e: StationError) => {
          assertStrictEquals(e.code, "sandbox_channel_lost");
          assertStrictEquals(e.status, 503);
          return true;
        });
      }
      // Over docker exec now (no supervisor above it), and nothing of the channel is left running.
      const after = await backend.exec(id, { ...EXEC, cmd: `${GRANDPARENT}; echo; ps -o args` });
      assertNotMatch(after.stdout, /supervisor|sleep 33/);
      assert(logs.some((l) => /sandbox channel lost, using docker exec/.test(l)), logs.join("\n"));

      await sleep(1_100);
      const back = await backend.exec(id, { ...EXEC, cmd: GRANDPARENT });
      assertStrictEquals(back.stdout.trim(), "/.stn/supervisor-v1");
      assert(logs.some((l) => /sandbox channel back/.test(l)), logs.join("\n"));
    });
  } finally {
    await backend.destroy(id);
  }
});

Deno.test("sandbox channel: a command that kills the process watching it fails and leaves nothing behind", async () => {
  const backend = testBackend(CHANNEL, { channelRetryMs: 60_000 });
  const id = await backend.create({ image: BUSYBOX, network: false, labels: testLabels("channel_shim") });
  try {
    await withLogs(async () => {
      await assertRejectsWith(
        backend.exec(id, { ...EXEC, cmd: "sleep 341 >/dev/null 2>&1 & kill -9 $PPID; echo gone" }),
        (e: StationError) => e.code === "sandbox_channel_lost",
      );
      const ps = await backend.exec(id, { ...EXEC, cmd: "ps -o args" });
      assertNotMatch(ps.stdout, /sleep 341|supervisor/);
    });
  } finally {
    await backend.destroy(id);
  }
});

Deno.test("sandbox channel: a container made without the supervisor (an older stn) works over docker exec", async () => {
  // Made without a channel, so none is running from the supervisor about to be removed.
  const backend = testBackend(DOCKER_EXEC);
  const id = await backend.create({ image: BUSYBOX, network: false, labels: testLabels("channel_old") });
  try {
    // (/.stn is the mount point of the supervisor's volume, in a read-only root: it stays, empty.)
    await asRoot(id, "rm -f /.stn/supervisor-v1");
    const fresh = testBackend(CHANNEL);
    await withLogs(async (logs) => {
      assertStrictEquals((await fresh.exec(id, { ...EXEC, cmd: "ls -A /.stn" })).stdout, "");
      await everyOperation(fresh, id);
      await everyOperation(fresh, id);
      const down = logs.filter((l) => /sandbox channel down, using docker exec/.test(l));
      assertStrictEquals(down.length, 1, logs.join("\n"));
      assertMatch(down[0], /no usable \/\.stn\/supervisor-v1/);
      assertNotMatch((await fresh.exec(id, { ...EXEC, cmd: GRANDPARENT })).stdout, /supervisor/);
    }).finally(() => fresh.close());
  } finally {
    await backend.destroy(id);
  }
});

testInBothModes(
  "sandbox channel: refusals and short writes answer the same over both paths",
  async (mode) => {
    const backend = testBackend(mode);
    const id = await backend.create({ image: BUSYBOX, network: false, labels: testLabels("refusals") });
    const code = (expected: string) => (e: StationError) => {
      assertStrictEquals(e.code, expected, e.message);
      return true;
    };
    try {
      await backend.writeFile(id, "keep.txt", { data: new TextEncoder().encode("old"), size: 3 });
      // A streamed write with fewer or more bytes than announced fails and leaves the old file.
      const chunks = (n: number) => Readable.from([new Uint8Array(n).fill(120)]);
      await assertRejectsWith(
        backend.writeFile(id, "keep.txt", { data: chunks(2), size: 5 }),
        code("size_mismatch"),
      );
      await assertRejectsWith(
        backend.writeFile(id, "keep.txt", { data: chunks(9), size: 5 }),
        code("size_mismatch"),
      );
      assertStrictEquals(
        (await readAll((await backend.readFile(id, "keep.txt", 10)).stream)).toString(),
        "old",
      );
      await backend.writeFile(id, "empty", { data: new Uint8Array(0), size: 0 });
      const empty = await backend.readFile(id, "empty", 10);
      assertEquals([empty.size, (await readAll(empty.stream)).length], [0, 0]);

      await backend.exec(id, { ...EXEC, cmd: "mkdir -p d/e; echo x > secret; chmod 000 secret" });
      await assertRejectsWith(backend.readFile(id, "secret", 10), (e: StationError) => {
        assertEquals([e.code, e.status], ["file_unreadable", 403]);
        return true;
      });
      await assertRejectsWith(backend.list(id, "keep.txt", false), code("not_a_directory"));
      await assertRejectsWith(backend.list(id, "nowhere", false), code("file_not_found"));
      await assertRejectsWith(backend.delete(id, "d", false), (e: StationError) => {
        assertStrictEquals(e.code, "is_a_directory");
        assertMatch(e.hint ?? "", /recursive/);
        return true;
      });
      await assertRejectsWith(backend.delete(id, "/workspace", true), code("path_outside_workspace"));
      await assertRejectsWith(
        backend.writeFile(id, "d", { data: new Uint8Array(1), size: 1 }),
        code("is_a_directory"),
      );
      await assertRejectsWith(backend.delete(id, "nowhere", false), code("file_not_found"));
      const missing = await backend.exec(id, { ...EXEC, cmd: ["no-such-program"] });
      // The one difference: the supervisor answers a shell's 127 (command not found), the engine 126.
      assertStrictEquals(missing.exit_code, mode.channel ? 127 : 126);
      assertMatch(missing.stdout + missing.stderr, /no-such-program/);
    } finally {
      await backend.destroy(id);
    }
  },
);
