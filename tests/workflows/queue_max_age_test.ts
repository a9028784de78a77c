import assert from "node:assert/strict";
import { jetstreamManager } from "@nats-io/jetstream";
import { nanos } from "@nats-io/transport-node";
import { loadConfig } from "../../src/config/load.ts";
import { STREAM } from "../../src/workflows/engine/dispatch.ts";
import { tempHome } from "../helpers/home.ts";
import { startTestStation } from "../helpers/station.ts";

Deno.test("engine: the work queue stream gets engine.queue_max_age as its MaxAge", async () => {
  const t = await startTestStation({ configYaml: "engine:\n  queue_max_age: 2d\n" });
  try {
    const jsm = await jetstreamManager(t.station.ctx.nats.nc);
    assert.equal((await jsm.streams.info(STREAM)).config.max_age, nanos(2 * 86_400_000));
  } finally {
    await t.close();
  }
});

Deno.test("config: engine.queue_max_age must be longer than engine.default_timeout", async () => {
  const home = await tempHome();
  try {
    home.writeConfig("engine:\n  queue_max_age: 1m\n  default_timeout: 5m\n");
    assert.throws(
      () => loadConfig({ env: home.env }),
      /engine\.queue_max_age: must be longer than engine\.default_timeout/,
    );
    assert.equal(
      loadConfig({ env: { ...home.env, STN_ENGINE_QUEUE_MAX_AGE: "1h" } }).values.engine.queue_max_age,
      3_600_000,
    );
  } finally {
    await home.cleanup();
  }
});
