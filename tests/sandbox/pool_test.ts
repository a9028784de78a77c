import { assert, assertEquals, assertMatch, assertStrictEquals } from "../helpers/assert.ts";
import { stationId } from "../../src/sandbox/ledger.ts";
import { SandboxService } from "../../src/sandbox/service.ts";
import { startTestStation } from "../helpers/station.ts";
import {
  labelledVolumes,
  type Mode,
  removeStationContainers,
  sandboxConfig,
  testBackend,
  testInBothModes,
} from "./backend.ts";

const poolConfig = (mode: Mode) =>
  `${sandboxConfig(mode)}  pool:
    sh: { size: 1 }
`;

testInBothModes(
  "sandbox pool: opens take a ready hardened container, the pool refills, stop and crash recovery remove leftovers",
  async (mode) => {
    const t = await startTestStation({ configYaml: poolConfig(mode) });
    const sandbox = t.station.ctx.sandbox!;
    const image = sandbox.config.images.sh;
    const pooled = () => sandbox.backend.listManaged({ "dev.stn.session": "pool" });
    try {
      await sandbox.pool.filled();
      const [ready] = (await pooled()).filter((c) => sandbox.pool.holds(c.id));
      assert(ready, "one container waits in the pool");

      // An open without a network takes it; it runs commands as the sandbox user like a cold one.
      const { session } = await sandbox.open({});
      assertStrictEquals(session.container_id, ready.id);
      assertStrictEquals(sandbox.pool.holds(ready.id), false);
      const who = await sandbox.exec(session.id, { cmd: "id -u && cat /proc/1/status | grep CapEff" });
      assertStrictEquals(who.exit_code, 0);
      assertMatch(who.stdout, /^1000\n/);
      assertMatch(who.stdout, /CapEff:\s+0+\n/);
      await sandbox.pool.filled();
      assertEquals(sandbox.pool.counts(), { [image]: 1 }, "the pool refilled");

      // A crash leaves the pool's ready container behind: the next start's recovery removes it and keeps
      // the session's container, which the ledger records.
      const { db, files } = t.station.ctx;
      const restarted = new SandboxService(sandbox.backend, {
        db,
        files,
        config: sandbox.config,
        stationId: stationId(db),
      });
      const leftover = (await pooled()).find((c) => sandbox.pool.holds(c.id))!;
      const report = await restarted.recover();
      assertEquals(report.adopted, [session.id]);
      assert(report.removed.includes("pool"));
      assertEquals((await pooled()).map((c) => c.id).filter((id) => id === leftover.id), []);

      // stop() removes what is still waiting, with its volume: only the taken container's is left.
      await sandbox.pool.filled();
      await sandbox.stop();
      assertEquals((await pooled()).filter((c) => c.id !== session.container_id), []);
      const station = { "dev.stn.station": stationId(db) };
      const taken = await testBackend().docker.getContainer(session.container_id).inspect();
      assertEquals(
        await labelledVolumes({ ...station, "dev.stn.session": "pool" }),
        taken.Mounts.map((m) => m.Name),
      );
    } finally {
      await removeStationContainers(t.home.path("stn.db"));
      await t.close();
    }
  },
);
