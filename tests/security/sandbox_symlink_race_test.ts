import { assert, assertEquals, assertNotMatch, assertStrictEquals } from "../helpers/assert.ts";
import { openSandbox } from "../../src/client/sandboxes.ts";
import type { SessionView } from "../../src/sandbox/service.ts";
import { startTestStation } from "../helpers/station.ts";
import { removeStationContainers, sandboxConfig, testInBothModes } from "../sandbox/backend.ts";
import { asRoot, type ReadOutcome, repeatFor, request } from "./sandbox_helpers.ts";

// A process in the sandbox keeps renaming `x` between a real directory (holding harmless passwd and
// shadow files) and a symlink to /etc, which reads and publishes under x/ race. Writes race `w`, which
// another loop keeps remaking as a directory or a link to /etc (remade, because a write replaces a
// link on its way with a directory, which would throw the renaming loop off).
const SWAPPER = `mkdir real; echo inside > real/passwd; echo inside > real/shadow; ln -s /etc evil
(while :; do rm -rf w; mkdir w; usleep 20000; rm -rf w; ln -s /etc w; usleep 20000; done) &
while :; do mv real x; usleep 20000; mv x real; mv evil x; usleep 20000; mv x evil; done`;
const RACE_MS = 8_000;

testInBothModes(
  "security: a symlink swapped under reads, writes and publishes never lets them leave /workspace",
  async (mode) => {
    const t = await startTestStation({ configYaml: sandboxConfig(mode) });
    try {
      const { sandbox_id: id } = await openSandbox(t.client, {});
      const session = await t.client.json<SessionView>("GET", `/api/v1/sandboxes/${id}`);
      // A root-only secret where the link points: the engine reads archives as root, the sandbox user cannot.
      await asRoot(
        session.container_id,
        "echo 'root:SECRET-HASH:1::::::' > /etc/shadow; chmod 600 /etc/shadow",
      );
      const swapping = t.client.json("POST", `/api/v1/sandboxes/${id}/exec`, {
        body: { cmd: SWAPPER, timeout_seconds: 60 },
        signal: AbortSignal.timeout(90_000),
      }).catch(() => undefined);

      const outcomes: ReadOutcome[] = [];
      const bodies: string[] = [];
      const base = `${t.client.baseUrl}/api/v1/sandboxes/${id}`;
      const token = undefined; // the test station listens on loopback, where no token is asked for
      await repeatFor(RACE_MS, async () => {
        const round = await Promise.all([
          request(`${base}/files/x/shadow`, token),
          request(`${base}/files/x/passwd`, token),
        ]);
        outcomes.push(...round);
        for (const o of round) if (o.body) bodies.push(new TextDecoder().decode(o.body));
        // Writes race it too: none may land in /etc (the engine's archive endpoint extracted as root).
        outcomes.push(await request(`${base}/files/w/probe.txt`, token, { method: "PUT", body: "probe" }));
        const published = await request(`${base}/publish`, token, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ source: "x/passwd", file_key: `probe/${crypto.randomUUID()}` }),
        });
        outcomes.push(published);
        if (published.status === 201) {
          const info = JSON.parse(new TextDecoder().decode(published.body)) as { file_key: string };
          const stored = await t.client.fetch("GET", `/api/v1/files/${info.file_key}`);
          bodies.push(await stored.text());
        }
      }, () => bodies.length > 0 && outcomes.some((o) => o.status >= 400));

      const escapes = bodies.filter((b) => b !== "inside\n");
      assertEquals(escapes, [], "a read or publish returned something other than the workspace's file");
      assertStrictEquals(outcomes.filter((o) => o.hung).length, 0, "a request hung");
      assertEquals(outcomes.filter((o) => o.unreachable), [], "the server stopped answering");
      const failures = outcomes.filter((o) => o.status >= 500 || o.aborted);
      assertEquals(failures, [], "a request failed on the server's side");
      // The race was real: some reads went through (the directory) and some were refused (the link).
      assert(bodies.length > 0, "no read succeeded");
      const refused = outcomes.filter((o) => o.status >= 400).map((o) => o.code);
      assert(refused.length > 0, "no read was refused");
      // file_unreadable: the swap landed between the reader's checks and its open, which then ran as the
      // sandbox user on the root-only /etc/shadow and was refused by the kernel (nothing was read).
      for (const code of refused) {
        assert(
          ["path_outside_workspace", "not_a_file", "file_not_found", "path_changed", "file_unreadable"]
            .includes(
              code!,
            ),
          code,
        );
      }
      const etc = await t.client.json<{ stdout: string }>("POST", `/api/v1/sandboxes/${id}/exec`, {
        body: { cmd: "ls /etc" },
      });
      assertNotMatch(etc.stdout, /probe/, "a write went through the link into /etc");
      await t.client.json("DELETE", `/api/v1/sandboxes/${id}`);
      await swapping;
    } finally {
      await removeStationContainers(t.home.path("stn.db"));
      await t.close();
    }
  },
);
