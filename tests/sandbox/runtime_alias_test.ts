import assert from "node:assert/strict";
import { execStreaming, openSandbox } from "../../src/client/sandboxes.ts";
import type { StationError } from "../../src/errors.ts";
import { startTestStation } from "../helpers/station.ts";
import { BUSYBOX } from "./images.ts";
import { removeStationContainers } from "./backend.ts";

Deno.test("sandbox: runtime linux (Station's name) opens the plain shell image that bash maps to", async () => {
  const t = await startTestStation({
    configYaml: `sandbox:\n  images:\n    bash: ${BUSYBOX}\n  default_runtime: bash\n`,
  });
  try {
    const opened = await openSandbox(t.client, { runtime: "linux" });
    assert.equal(opened.image, BUSYBOX);
    assert.equal(opened.session.runtime, "linux");
    const out = await execStreaming(t.client, opened.sandbox_id, { cmd: "echo linux-ok" }, {
      onEvent: () => {},
    });
    assert.equal(out.stdout, "linux-ok\n");
    await assert.rejects(
      openSandbox(t.client, { runtime: "cobol" }),
      (e: StationError) => e.code === "unknown_runtime" && /linux/.test(e.hint ?? ""),
    );
  } finally {
    await removeStationContainers(t.home.path("stn.db"));
    await t.close();
  }
});
