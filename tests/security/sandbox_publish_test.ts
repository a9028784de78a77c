import { assert, assertRejectsWith, assertStrictEquals } from "../helpers/assert.ts";
import { downloadFile, uploadFile } from "../../src/client/files.ts";
import { openSandbox, publishFile, writeSandboxFile } from "../../src/client/sandboxes.ts";
import type { StationError } from "../../src/errors.ts";
import { callTool, sandboxPublishFile } from "../../src/sandbox/tools.ts";
import { startTestStation } from "../helpers/station.ts";
import { removeStationContainers, sandboxConfig, testInBothModes } from "../sandbox/backend.ts";

const text = (s: string) => new TextEncoder().encode(s);

testInBothModes(
  "security: publish creates new keys, replaces only its own scope's keys, and only with overwrite",
  async (mode) => {
    const t = await startTestStation({ configYaml: sandboxConfig(mode) });
    try {
      const content = async (key: string) => await (await downloadFile(t.client, key)).text();
      const refused = (status: number, code: string) => (e: StationError) => {
        assertStrictEquals(e.code, code, e.message);
        assertStrictEquals(e.status, status);
        assert(e.hint, "the refusal says what to do");
        return true;
      };
      await uploadFile(t.client, new Blob([text("the user's upload")]).stream(), { key: "files/victim.txt" });

      const agent = (await openSandbox(t.client, {})).sandbox_id;
      const run = (await openSandbox(t.client, { scope: "workflow", run_id: "run_other" })).sandbox_id;
      await writeSandboxFile(t.client, agent, "out.txt", text("from the agent sandbox"));
      await writeSandboxFile(t.client, run, "out.txt", text("the other run's output"));
      assertStrictEquals(
        (await publishFile(t.client, run, "out.txt")).file_key,
        "runs/run_other/output/out.txt",
      );

      // Existing keys outside the sandbox's scope: refused, with or without overwrite; nothing changes.
      for (const key of ["files/victim.txt", "runs/run_other/output/out.txt"]) {
        for (const overwrite of [undefined, true]) {
          await assertRejectsWith(
            publishFile(t.client, agent, "out.txt", { file_key: key, overwrite }),
            refused(403, "publish_scope_denied"),
          );
        }
      }
      assertStrictEquals(await content("files/victim.txt"), "the user's upload");
      assertStrictEquals(await content("runs/run_other/output/out.txt"), "the other run's output");
      // The agent tools follow the same rule.
      await assertRejectsWith(
        callTool(sandboxPublishFile, {
          sandbox_id: agent,
          source: "out.txt",
          file_key: "files/victim.txt",
          overwrite: true,
        }, {
          sandbox: t.station.ctx.sandbox!,
        }),
        refused(403, "publish_scope_denied"),
      );

      // A new key anywhere is fine; once it exists it is someone's file like any other.
      assertStrictEquals(
        (await publishFile(t.client, agent, "out.txt", { file_key: "files/new.txt" })).file_key,
        "files/new.txt",
      );
      await assertRejectsWith(
        publishFile(t.client, agent, "out.txt", { file_key: "files/new.txt", overwrite: true }),
        refused(403, "publish_scope_denied"),
      );

      // Its own scope: replacing needs overwrite.
      const own = (await publishFile(t.client, agent, "out.txt")).file_key;
      assertStrictEquals(own, `sessions/${agent}/out.txt`);
      await writeSandboxFile(t.client, agent, "out.txt", text("second version"));
      await assertRejectsWith(publishFile(t.client, agent, "out.txt"), refused(409, "file_exists"));
      assertStrictEquals(await content(own), "from the agent sandbox");
      await publishFile(t.client, agent, "out.txt", { overwrite: true });
      assertStrictEquals(await content(own), "second version");
      // A run's sandbox owns its run's outputs.
      await publishFile(t.client, run, "out.txt", { overwrite: true });
    } finally {
      await removeStationContainers(t.home.path("stn.db"));
      await t.close();
    }
  },
);
