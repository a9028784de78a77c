import {
  assert,
  assertEquals,
  assertMatch,
  assertRejectsWith,
  assertStrictEquals,
} from "../../helpers/assert.ts";
import type { StationError } from "../../../src/errors.ts";
import {
  closeSandbox,
  execStreaming,
  listSandboxes,
  listSandboxFiles,
  openSandbox,
  readSandboxFile,
  runCode,
  writeSandboxFile,
} from "../../../src/client/sandboxes.ts";
import { startTestStation } from "../../helpers/station.ts";
import { waitFor } from "../../helpers/stn.ts";
import { removeStationContainers, sandboxConfig, testInBothModes } from "../../sandbox/backend.ts";

testInBothModes("sandbox API: open, exec (JSON and SSE), files, list, close", async (mode) => {
  const t = await startTestStation({ configYaml: sandboxConfig(mode) });
  try {
    const opened = await openSandbox(t.client, {});
    assertMatch(opened.sandbox_id, /^sbx_[0-9A-Z]{26}$/);
    assertStrictEquals(opened.image, "stn-test/busybox:latest");
    assertStrictEquals(opened.created, true);
    const id = opened.sandbox_id;

    await writeSandboxFile(t.client, id, "dir/hello.txt", new TextEncoder().encode("hi there"));
    const res = await readSandboxFile(t.client, id, "dir/hello.txt");
    assertStrictEquals(res.headers.get("content-length"), "8");
    assertStrictEquals(await res.text(), "hi there");
    assertEquals((await listSandboxFiles(t.client, id, undefined, true)).map((e) => e.path), [
      "dir",
      "dir/hello.txt",
    ]);

    const json = await t.client.json<{ exit_code: number; stdout: string }>(
      "POST",
      `/api/v1/sandboxes/${id}/exec`,
      {
        body: { cmd: ["cat", "dir/hello.txt"] },
      },
    );
    assertStrictEquals(json.stdout, "hi there");

    const events: string[] = [];
    const result = await execStreaming(t.client, id, { cmd: "echo one; echo two >&2; exit 3" }, {
      onEvent: (e) => {
        if (e.type !== "result") events.push(`${e.type}:${e.data}`);
      },
    });
    assertStrictEquals(result.exit_code, 3);
    assertEquals(events.sort(), ["stderr:two\n", "stdout:one\n"]);

    // Errors come back as {error: {code, message, hint}} with a 4xx.
    for (const path of ["/etc/passwd", "%2E%2E%2Fetc%2Fpasswd", "a%2F..%2F..%2Fetc%2Fpasswd"]) {
      await assertRejectsWith(
        t.client.fetch("GET", `/api/v1/sandboxes/${id}/files/${path}`),
        (e: StationError) => {
          assertStrictEquals(e.status, 400, path);
          assertStrictEquals(e.code, "path_outside_workspace");
          return true;
        },
      );
    }
    await assertRejectsWith(
      readSandboxFile(t.client, id, "/etc/passwd"),
      (e: StationError) => e.status === 400,
    );
    assertStrictEquals(
      await (await readSandboxFile(t.client, id, "/workspace/dir/hello.txt")).text(),
      "hi there",
    );
    await assertRejectsWith(
      t.client.json("POST", `/api/v1/sandboxes/${id}/exec`, { body: { cmd: [] } }),
      (e: StationError) => e.status === 400 && e.code === "invalid_request",
    );
    await assertRejectsWith(
      openSandbox(t.client, { image: "alpine:latest" }),
      (e: StationError) =>
        e.status === 400 && e.code === "image_not_allowed" && /allowed_images/.test(e.hint ?? ""),
    );
    await assertRejectsWith(
      openSandbox(t.client, { network: true }),
      (e: StationError) => e.status === 403 && e.code === "network_not_allowed",
    );

    assertEquals((await listSandboxes(t.client)).map((s) => s.id), [id]);
    const closed = await closeSandbox(t.client, id);
    assertStrictEquals(closed.status, "closed");
    assertEquals(await listSandboxes(t.client), []);
    await assertRejectsWith(
      t.client.json("GET", `/api/v1/sandboxes/${id}`),
      (e: StationError) => e.status === 410 && e.code === "sandbox_closed",
    );
  } finally {
    await removeStationContainers(t.home.path("stn.db"));
    await t.close();
  }
});

testInBothModes(
  "sandbox API: compute run returns real exit codes and removes its container",
  async (mode) => {
    const t = await startTestStation({ configYaml: sandboxConfig(mode) });
    try {
      const ok = await runCode(t.client, {
        runtime: "python",
        code: "import sys, helper\nprint(helper.X * int(sys.argv[1]))\nsys.exit(4)",
        files: { "helper.py": "X = 21\n" },
        args: ["2"],
      });
      assertStrictEquals(ok.stdout, "42\n");
      assertStrictEquals(ok.exit_code, 4);
      assertStrictEquals(ok.runtime, "python");
      const timed = await runCode(t.client, { code: "sleep 30", timeout_seconds: 1 });
      assertStrictEquals(timed.timed_out, true);
      const docker = (await import("../../sandbox/backend.ts")).testBackend();
      const { DatabaseSync } = await import("node:sqlite");
      const db = new DatabaseSync(t.home.path("stn.db"));
      const stationId =
        (db.prepare("SELECT value FROM station_meta WHERE key='station_id'").get() as { value: string })
          .value;
      db.close();
      assertEquals(await docker.listManaged({ "dev.stn.station": stationId }), []);
      await assertRejectsWith(
        runCode(t.client, { runtime: "cobol", code: "x" }),
        (e: StationError) => e.status === 400 && e.code === "unknown_runtime",
      );
    } finally {
      await removeStationContainers(t.home.path("stn.db"));
      await t.close();
    }
  },
);

testInBothModes("sandbox API: a client that disconnects mid-exec gets its command killed", async (mode) => {
  const t = await startTestStation({ configYaml: sandboxConfig(mode) });
  try {
    const { sandbox_id: id } = await openSandbox(t.client, {});
    const count = async () =>
      (await t.client.json<{ stdout: string }>("POST", `/api/v1/sandboxes/${id}/exec`, {
        body: { cmd: "ps -o args | grep -c '^sleep 300'" },
      })).stdout.trim();
    const gone = new AbortController();
    const pending = fetch(t.client.url(`/api/v1/sandboxes/${id}/exec`), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ cmd: ["sleep", "300"] }),
      signal: gone.signal,
    }).catch((err) => err);
    assert(await waitFor(async () => (await count()) === "1", 10_000), "the command runs");
    gone.abort();
    assert((await pending) instanceof Error, "the client gave up");
    assert(
      await waitFor(async () => (await count()) === "0", 10_000),
      "the command is killed in the container",
    );
    await closeSandbox(t.client, id);
  } finally {
    await removeStationContainers(t.home.path("stn.db"));
    await t.close();
  }
});
