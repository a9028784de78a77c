import {
  assert,
  assertEquals,
  assertNotStrictEquals,
  assertRejectsWith,
  assertStrictEquals,
} from "../helpers/assert.ts";
import type { StationError } from "../../src/errors.ts";
import {
  callTool,
  sandboxExec,
  sandboxFsRead,
  sandboxFsWrite,
  toolDefinitions,
} from "../../src/sandbox/tools.ts";
import { startTestStation } from "../helpers/station.ts";
import { stationId } from "../../src/sandbox/ledger.ts";
import {
  labelledVolumes,
  removeStationContainers,
  sandboxConfig,
  testBackend,
  testInBothModes,
} from "./backend.ts";

testInBothModes(
  "sandbox service: workflow scope shares one container per run; closeRun removes it",
  async (mode) => {
    const t = await startTestStation({ configYaml: sandboxConfig(mode) });
    const sandbox = t.station.ctx.sandbox!;
    try {
      // Two steps of one run asking at once get the same session.
      const [a, b] = await Promise.all([
        sandbox.open({ scope: "workflow", run_id: "run_1" }),
        sandbox.open({ scope: "workflow", run_id: "run_1" }),
      ]);
      assertStrictEquals(a.session.id, b.session.id);
      assertEquals([a.created, b.created].sort(), [false, true]);
      const other = await sandbox.open({ scope: "workflow", run_id: "run_2" });
      assertNotStrictEquals(other.session.id, a.session.id);
      const agent = await sandbox.open({ scope: "agent" });
      assertNotStrictEquals(agent.session.id, a.session.id);

      const info = await sandbox.backend.listManaged({ "dev.stn.session": a.session.id });
      assertStrictEquals(info[0].labels["dev.stn.scope"], "workflow");
      assertStrictEquals(info[0].labels["dev.stn.run"], "run_1");
      assert(!Number.isNaN(Date.parse(info[0].labels["dev.stn.created_at"])));

      // Publishing from a run's session defaults to runs/<run>/output/<name>.
      await sandbox.writeFile(a.session.id, "out/report.txt", {
        data: new TextEncoder().encode("done"),
        size: 4,
      });
      const published = await sandbox.publish(a.session.id, "out/report.txt");
      assertStrictEquals(published.key, "runs/run_1/output/report.txt");
      assertStrictEquals(published.metadata.sandbox_id, a.session.id);

      await sandbox.closeRun("run_1");
      assertStrictEquals(sandbox.list(true).find((s) => s.id === a.session.id)?.close_reason, "run_ended");
      assertEquals(await sandbox.backend.listManaged({ "dev.stn.session": a.session.id }), []);
      await assertRejectsWith(
        sandbox.open({ scope: "workflow" }),
        (e: StationError) => e.code === "run_id_required",
      );
    } finally {
      await removeStationContainers(t.home.path("stn.db"));
      await t.close();
    }
  },
);

testInBothModes(
  "sandbox service: the idle reaper closes unused sessions; recovery marks vanished and stopped containers lost and leaves no volume",
  async (mode) => {
    const t = await startTestStation({ configYaml: sandboxConfig(mode) });
    const sandbox = t.station.ctx.sandbox!;
    try {
      const idle = (await sandbox.open({})).session;
      const busy = (await sandbox.open({})).session;
      // An hour later, only `busy` has been used in the last idle_timeout (30m).
      const later = Date.now() + 3_600_000;
      await sandbox.exec(busy.id, { cmd: "true" });
      const reaped = await sandbox.reapIdle(later);
      assertEquals(reaped.sort(), [busy.id, idle.id].sort(), "both are idle an hour later");
      assertEquals(sandbox.list(), []);
      assertStrictEquals(sandbox.list(true)[0].close_reason, "idle");

      const fresh = (await sandbox.open({})).session;
      assertEquals(await sandbox.reapIdle(), [], "a session just used is not reaped");
      // One container removed by hand without its volume (`docker rm -f`, no -v); one stopped, which
      // took its in-memory /workspace with it.
      const stopped = (await sandbox.open({})).session;
      await sandbox.exec(stopped.id, { cmd: "echo kept > file" });
      const docker = testBackend().docker;
      await docker.getContainer(fresh.container_id).remove({ force: true });
      await docker.getContainer(stopped.container_id).stop({ t: 0 });
      const station = { "dev.stn.station": stationId(t.station.ctx.db) };
      assertStrictEquals(
        (await labelledVolumes(station)).length,
        2,
        "the removed container's volume was left",
      );
      const report = await sandbox.recover();
      assertEquals(report.lost.sort(), [fresh.id, stopped.id].sort());
      assertEquals(report.adopted, []);
      for (const lost of [fresh, stopped]) {
        await assertRejectsWith(
          sandbox.exec(lost.id, { cmd: "true" }),
          (e: StationError) =>
            e.code === "sandbox_closed" && e.status === 410 && /container_lost/.test(e.message),
        );
      }
      assertEquals(await sandbox.backend.listManaged(station), []);
      assertEquals(await labelledVolumes(station), []);
    } finally {
      await removeStationContainers(t.home.path("stn.db"));
      await t.close();
    }
  },
);

testInBothModes(
  "sandbox tools: JSON Schemas for a model, validated input, flagged truncation",
  async (mode) => {
    const defs = toolDefinitions();
    assertEquals(defs.map((d) => d.name), [
      "sandbox_run",
      "sandbox_open",
      "sandbox_exec",
      "sandbox_fs_write",
      "sandbox_fs_read",
      "sandbox_fs_list",
      "sandbox_fs_delete",
      "sandbox_stage_file",
      "sandbox_publish_file",
      "sandbox_close",
    ]);
    const exec = defs.find((d) => d.name === "sandbox_exec")!.input_schema as {
      type: string;
      required: string[];
      properties: Record<string, unknown>;
    };
    assertStrictEquals(exec.type, "object");
    assertEquals(exec.required.sort(), ["cmd", "sandbox_id"]);
    assert("timeout_seconds" in exec.properties);

    const t = await startTestStation({ configYaml: sandboxConfig(mode) });
    const ctx = { sandbox: t.station.ctx.sandbox! };
    try {
      const { session } = await ctx.sandbox.open({});
      await assertRejectsWith(
        callTool(sandboxExec, { sandbox_id: session.id }, ctx),
        (e: StationError) => e.code === "invalid_request" && /cmd/.test(e.message),
      );
      await callTool(sandboxFsWrite, { sandbox_id: session.id, path: "t.txt", contents: "0123456789" }, ctx);
      const part = await callTool(
        sandboxFsRead,
        { sandbox_id: session.id, path: "t.txt", max_bytes: 4 },
        ctx,
      );
      assertEquals(part, {
        path: "t.txt",
        contents: "0123",
        size_bytes: 10,
        returned_bytes: 4,
        truncated: true,
      });
      await callTool(sandboxFsWrite, { sandbox_id: session.id, path: "b.bin", contents_b64: "/wA=" }, ctx);
      const bin = await callTool(sandboxFsRead, { sandbox_id: session.id, path: "b.bin" }, ctx);
      assertStrictEquals((bin as { contents_b64: string }).contents_b64, "/wA=");
    } finally {
      await removeStationContainers(t.home.path("stn.db"));
      await t.close();
    }
  },
);
