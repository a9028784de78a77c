import { assert, assertEquals, assertStrictEquals } from "../helpers/assert.ts";
import { openSandbox, writeSandboxFile } from "../../src/client/sandboxes.ts";
import type { SessionView } from "../../src/sandbox/service.ts";
import { startTestStation } from "../helpers/station.ts";
import { removeStationContainers, sandboxConfig, testInBothModes } from "../sandbox/backend.ts";
import { asRoot, request } from "./sandbox_helpers.ts";

// Paths that leave /workspace, as a client would put them in a URL (percent-encoded) or a JSON body.
const ESCAPES = [
  "/etc/passwd",
  "../etc/passwd",
  "a/../../etc/passwd",
  "/workspace/../etc/shadow",
  "/workspace/..",
  "/workspacex/file",
  "/tmp/x",
  "/proc/self/environ",
  "nul\0byte",
];

// Links planted by the sandbox user, and what reading or publishing through each must answer.
const LINKS: [string, string, number, string][] = [
  ["ln -s / up", "up/etc/shadow", 400, "path_outside_workspace"],
  ["ln -s /etc e", "e/passwd", 400, "path_outside_workspace"],
  ["ln -s /etc/shadow sh", "sh", 400, "not_a_file"],
  ["ln -s /etc/passwd pw", "pw", 400, "not_a_file"],
  ["mkdir -p d; ln -s /etc d/deep", "d/deep/passwd", 400, "path_outside_workspace"],
  ["ln -s /proc/1/root root1", "root1/etc/passwd", 400, "path_outside_workspace"],
  ["mkfifo fifo", "fifo", 400, "not_a_file"],
  ["ln -s /dev/zero zero", "zero", 400, "not_a_file"],
];

const json = (body: unknown): RequestInit => ({
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify(body),
});

testInBothModes(
  "security: the path-escape table: every way out of /workspace is refused by every operation",
  async (mode) => {
    const t = await startTestStation({ configYaml: sandboxConfig(mode) });
    try {
      const id = (await openSandbox(t.client, {})).sandbox_id;
      const session = await t.client.json<SessionView>("GET", `/api/v1/sandboxes/${id}`);
      await asRoot(session.container_id, "echo 'root:SECRET:1::::::' > /etc/shadow; chmod 600 /etc/shadow");
      await writeSandboxFile(t.client, id, "inside.txt", new TextEncoder().encode("inside"));
      const base = `${t.client.baseUrl}/api/v1/sandboxes/${id}`;
      const url = (path: string) => `${base}/files/${encodeURIComponent(path)}`;

      for (const path of ESCAPES) {
        const ops: [string, string, RequestInit?][] = [
          ["read", url(path)],
          ["write", url(path), { method: "PUT", body: "x" }],
          ["delete", url(path), { method: "DELETE" }],
          ["list", `${base}/files?path=${encodeURIComponent(path)}`],
          ["exec cwd", `${base}/exec`, json({ cmd: ["true"], cwd: path })],
          ["publish", `${base}/publish`, json({ source: path, file_key: "probe/x" })],
          ["stage", `${base}/stage`, json({ file_key: "files/none", destination: path })],
        ];
        for (const [op, target, init] of ops) {
          const out = await request(target, undefined, init);
          assertEquals(
            [out.status, out.code],
            [400, "path_outside_workspace"],
            `${op} ${JSON.stringify(path)}`,
          );
        }
      }

      const exec = (cmd: string) => request(`${base}/exec`, undefined, json({ cmd }));
      for (const [plant, path, status, code] of LINKS) {
        assertStrictEquals((await exec(plant)).status, 200, plant);
        for (
          const out of [
            await request(url(path), undefined),
            await request(`${base}/publish`, undefined, json({ source: path, file_key: "probe/y" })),
          ]
        ) {
          assertEquals([out.status, out.code], [status, code], `${plant}: ${path}`);
        }
        if (code === "path_outside_workspace") {
          // Deleting through the link, or listing the linked directory, is refused the same way.
          const dir = path.slice(0, path.lastIndexOf("/"));
          for (
            const out of [
              await request(url(path), undefined, { method: "DELETE" }),
              await request(`${base}/files?path=${encodeURIComponent(dir)}`, undefined),
            ]
          ) {
            // (A link the sandbox user cannot even enter, like /proc/1/root, is simply not found.)
            const refused = [[400, "path_outside_workspace"], [404, "file_not_found"]];
            assert(
              refused.some(([st, c]) => out.status === st && out.code === c),
              `${plant}: ${out.code}`,
            );
          }
        }
      }
      // Nothing was written outside, nothing was published, and the workspace's own file still reads.
      const check = await exec("cat /etc/passwd /tmp/x 2>/dev/null | grep -c '^x$'; true");
      assertStrictEquals(JSON.parse(new TextDecoder().decode(check.body)).stdout, "0\n");
      assertStrictEquals((await request(`${t.client.baseUrl}/api/v1/files/probe/x`, undefined)).status, 404);
      assertStrictEquals((await request(`${t.client.baseUrl}/api/v1/files/probe/y`, undefined)).status, 404);
      assertStrictEquals(
        new TextDecoder().decode((await request(url("inside.txt"), undefined)).body),
        "inside",
      );
      // HEAD answers the size and leaves no reader behind in the container (blocked on a full pipe).
      await exec("head -c 4000000 /dev/zero > big.bin");
      const head = await fetch(url("big.bin"), { method: "HEAD" });
      assertEquals([head.status, head.headers.get("content-length")], [200, "4000000"]);
      await head.body?.cancel();
      const readers = await exec("sleep 1; ps -o args | grep -c '[h]ead -c'; true");
      assertStrictEquals(JSON.parse(new TextDecoder().decode(readers.body)).stdout, "0\n");
    } finally {
      await removeStationContainers(t.home.path("stn.db"));
      await t.close();
    }
  },
);
