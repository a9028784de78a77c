import assert from "node:assert/strict";
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
    assert.match(opened.sandbox_id, /^sbx_[0-9A-Z]{26}$/);
    assert.equal(opened.image, "stn-test/busybox:latest");
    assert.equal(opened.created, true);
    const id = opened.sandbox_id;

    await writeSandboxFile(t.client, id, "dir/hello.txt", new TextEncoder().encode("hi there"));
    const res = await readSandboxFile(t.client, id, "dir/hello.txt");
    assert.equal(res.headers.get("content-length"), "8");
    assert.equal(await res.text(), "hi there");
    assert.deepEqual((await listSandboxFiles(t.client, id, undefined, true)).map((e) => e.path), [
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
    assert.equal(json.stdout, "hi there");

    const events: string[] = [];
    const result = await execStreaming(t.client, id, { cmd: "echo one; echo two >&2; exit 3" }, (e) => {
      if (e.type !== "result") events.push(`${e.type}:${e.data}`);
    });
    assert.equal(result.exit_code, 3);
    assert.deepEqual(events.sort(), ["stderr:two\n", "stdout:one\n"]);

    // Errors come back as {error: {code, message, hint}} with a 4xx.
    for (const path of ["/etc/passwd", "%2E%2E%2Fetc%2Fpasswd", "a%2F..%2F..%2Fetc%2Fpasswd"]) {
      await assert.rejects(
        t.client.fetch("GET", `/api/v1/sandboxes/${id}/files/${path}`),
        (e: StationError) => {
          assert.equal(e.status, 400, path);
          assert.equal(e.code, "path_outside_workspace");
          return true;
        },
      );
    }
    await assert.rejects(readSandboxFile(t.client, id, "/etc/passwd"), (e: StationError) => e.status === 400);
    assert.equal(await (await readSandboxFile(t.client, id, "/workspace/dir/hello.txt")).text(), "hi there");
    await assert.rejects(
      t.client.json("POST", `/api/v1/sandboxes/${id}/exec`, { body: { cmd: [] } }),
      (e: StationError) => e.status === 400 && e.code === "invalid_request",
    );
    await assert.rejects(
      openSandbox(t.client, { image: "alpine:latest" }),
      (e: StationError) =>
        e.status === 400 && e.code === "image_not_allowed" && /allowed_images/.test(e.hint ?? ""),
    );
    await assert.rejects(
      openSandbox(t.client, { network: true }),
      (e: StationError) => e.status === 403 && e.code === "network_not_allowed",
    );

    assert.deepEqual((await listSandboxes(t.client)).map((s) => s.id), [id]);
    const closed = await closeSandbox(t.client, id);
    assert.equal(closed.status, "closed");
    assert.deepEqual(await listSandboxes(t.client), []);
    await assert.rejects(
      t.client.json("GET", `/api/v1/sandboxes/${id}`),
      (e: StationError) => e.status === 410 && e.code === "sandbox_closed",
    );
  } finally {
    await removeStationContainers(t.home.path("station.db"));
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
      assert.equal(ok.stdout, "42\n");
      assert.equal(ok.exit_code, 4);
      assert.equal(ok.runtime, "python");
      const timed = await runCode(t.client, { code: "sleep 30", timeout_seconds: 1 });
      assert.equal(timed.timed_out, true);
      const docker = (await import("../../sandbox/backend.ts")).testBackend();
      const { DatabaseSync } = await import("node:sqlite");
      const db = new DatabaseSync(t.home.path("station.db"));
      const stationId =
        (db.prepare("SELECT value FROM station_meta WHERE key='station_id'").get() as { value: string })
          .value;
      db.close();
      assert.deepEqual(await docker.listManaged({ "dev.stn.station": stationId }), []);
      await assert.rejects(
        runCode(t.client, { runtime: "cobol", code: "x" }),
        (e: StationError) => e.status === 400 && e.code === "unknown_runtime",
      );
    } finally {
      await removeStationContainers(t.home.path("station.db"));
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
    assert.ok(await waitFor(async () => (await count()) === "1", 10_000), "the command runs");
    gone.abort();
    assert.ok((await pending) instanceof Error, "the client gave up");
    assert.ok(
      await waitFor(async () => (await count()) === "0", 10_000),
      "the command is killed in the container",
    );
    await closeSandbox(t.client, id);
  } finally {
    await removeStationContainers(t.home.path("station.db"));
    await t.close();
  }
});
