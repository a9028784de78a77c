import assert from "node:assert/strict";
import { openSandbox } from "../../src/client/sandboxes.ts";
import { startTestStation } from "../helpers/station.ts";
import { MODES, removeStationContainers, sandboxConfig, testInBothModes } from "../sandbox/backend.ts";
import { type ReadOutcome, repeatFor, request } from "./sandbox_helpers.ts";

const json = (body: unknown): RequestInit => ({
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify(body),
});

testInBothModes(
  "sandbox paths: a name over 255 bytes (or a path over 4095) is 400 path_invalid for every operation, not a 500",
  async (mode) => {
    const t = await startTestStation({ configYaml: sandboxConfig(mode) });
    try {
      const id = (await openSandbox(t.client, {})).sandbox_id;
      const base = `${t.client.baseUrl}/api/v1/sandboxes/${id}`;
      const url = (path: string) => `${base}/files/${encodeURIComponent(path)}`;
      const tooLong = [
        "a".repeat(256),
        `dir/${"b".repeat(300)}/file.txt`,
        "é".repeat(128), // 256 bytes of UTF-8
        Array(20).fill("c".repeat(250)).join("/"), // every name fits, the whole path does not
      ];
      for (const path of tooLong) {
        const ops: [string, string, RequestInit?][] = [
          ["write", url(path), { method: "PUT", body: "x" }],
          ["read", url(path)],
          ["delete", url(path), { method: "DELETE" }],
          ["list", `${base}/files?path=${encodeURIComponent(path)}`],
          ["exec cwd", `${base}/exec`, json({ cmd: ["true"], cwd: path })],
          ["publish", `${base}/publish`, json({ source: path, file_key: "probe/x" })],
          ["stage", `${base}/stage`, json({ file_key: "files/none", destination: path })],
        ];
        for (const [op, target, init] of ops) {
          const res = await request(target, undefined, init);
          assert.deepEqual(
            [res.status, res.code],
            [400, "path_invalid"],
            `${op} ${path.slice(0, 20)}…: ${res.message}`,
          );
        }
      }
      // The longest name the kernel takes still works.
      const longest = "d".repeat(255);
      assert.ok((await request(url(longest), undefined, { method: "PUT", body: "fits" })).status < 300);
      const read = await request(url(longest), undefined);
      assert.equal(new TextDecoder().decode(read.body), "fits");
    } finally {
      await removeStationContainers(t.home.path("stn.db"));
      await t.close();
    }
  },
);

// Renames `f` between a regular file and a symlink as fast as Python can, so a read's open meets the link
// (ELOOP under O_NOFOLLOW) and its look right after finds the file, or nothing.
const SWAPPER = `import os
open("real", "w").write("inside\\n")
os.symlink("elsewhere", "lnk")
while True:
    os.rename("real", "f"); os.rename("f", "real"); os.rename("lnk", "f"); os.rename("f", "lnk")
`;
const RACE_MS = 6_000;

Deno.test("sandbox paths: a symlink met during a read or publish and gone right after is 409 path_changed, never a 500", async () => {
  const t = await startTestStation({ configYaml: sandboxConfig(MODES[0]) });
  try {
    const id = (await openSandbox(t.client, { runtime: "python" })).sandbox_id;
    const swapping = t.client.json("POST", `/api/v1/sandboxes/${id}/exec`, {
      body: { cmd: ["python3", "-c", SWAPPER], timeout_seconds: 25 },
      signal: AbortSignal.timeout(60_000),
    }).catch(() => undefined);
    const base = `${t.client.baseUrl}/api/v1/sandboxes/${id}`;
    const outcomes: ReadOutcome[] = [];
    await repeatFor(RACE_MS, async () => {
      outcomes.push(
        ...await Promise.all([
          request(`${base}/files/f`, undefined),
          request(`${base}/files/f`, undefined),
          request(
            `${base}/publish`,
            undefined,
            json({ source: "f", file_key: `probe/${crypto.randomUUID()}` }),
          ),
        ]),
      );
    }, () => outcomes.some((o) => o.code === "path_changed"));

    const failures = outcomes.filter((o) => o.status >= 500 || o.status === 0 || o.aborted);
    assert.deepEqual(failures, [], "a request failed on the server's side");
    const codes = new Set(outcomes.filter((o) => o.status >= 400).map((o) => `${o.status} ${o.code}`));
    for (const code of codes) {
      assert.ok(["404 file_not_found", "400 not_a_file", "409 path_changed"].includes(code), code);
    }
    for (const o of outcomes.filter((o) => o.status === 200)) {
      assert.equal(new TextDecoder().decode(o.body), "inside\n");
    }
    await t.client.json("DELETE", `/api/v1/sandboxes/${id}`);
    await swapping;
  } finally {
    await removeStationContainers(t.home.path("stn.db"));
    await t.close();
  }
});
