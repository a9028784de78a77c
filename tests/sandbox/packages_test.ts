import assert from "node:assert/strict";
import { startAgentRun } from "../../src/client/agent_runs.ts";
import { syncWorkflows } from "../../src/client/workflows.ts";
import type { StationError } from "../../src/errors.ts";
import { PackageChecks, packageName } from "../../src/sandbox/packages.ts";
import { type ModelRequest, startModelServer } from "../helpers/model_server.ts";
import { startTestStation } from "../helpers/station.ts";
import { removeStationContainers, testBackend } from "./backend.ts";
import { BUSYBOX, PYTHON_PKGS as PKGS } from "./images.ts";

Deno.test("pip_packages: requirement names are the distribution's", () => {
  assert.deepEqual(
    ["pandas==2.2", "requests[socks]>=2", " numpy ", "attrs ; python_version>'3'", "pkg @ https://x"].map(
      packageName,
    ),
    ["pandas", "requests", "numpy", "attrs", "pkg"],
  );
});

Deno.test("pip_packages: an image carrying them passes; one lacking them is a clear error naming them", async () => {
  const stationId = `pkgtest_${crypto.randomUUID().slice(0, 8)}`;
  const backend = testBackend();
  const checks = new PackageChecks(backend, stationId);
  try {
    await checks.require(PKGS, ["stn-fixture", "STN_Fixture==1.0"]);
    await assert.rejects(
      checks.require(PKGS, ["stn-fixture", "surely-not-installed-stn==1.0"]),
      (e: StationError) => {
        assert.equal(e.code, "pip_packages_missing");
        assert.equal(e.status, 400);
        assert.match(e.message, /does not carry the pip_packages surely-not-installed-stn$/);
        assert.match(e.hint ?? "", /RUN pip install surely-not-installed-stn/);
        return true;
      },
    );
    await assert.rejects(checks.require(BUSYBOX, ["stn-fixture"]), /python3 could not check them/);
    // The check's containers are gone.
    assert.deepEqual(await backend.listManaged({ "dev.stn.station": stationId }), []);
  } finally {
    await backend.close?.();
  }
});

const agent = (packages: string) =>
  `---
model: openai/test-model
sandbox:
  mode: compute
  runtime: python
  pip_packages: ${packages}
---
{{role "system"}}
Compute.
{{role "user"}}
{{userInput}}
`;

Deno.test("pip_packages: an agent's sandbox tool runs when the image carries them, else the tool answers which ones are missing", async () => {
  const model = startModelServer();
  const t = await startTestStation({
    configYaml:
      `sandbox:\n  images:\n    python: ${PKGS}\nai:\n  base_url: ${model.url}\n  api_key: sk-test\n`,
  });
  try {
    const dir = t.home.path("environments", "default", "agents");
    Deno.mkdirSync(dir, { recursive: true });
    Deno.writeTextFileSync(`${dir}/Carried.prompt`, agent("[stn-fixture]"));
    Deno.writeTextFileSync(`${dir}/Missing.prompt`, agent("[stn-fixture, surely-not-installed-stn]"));
    await syncWorkflows(t.client);
    const toolResult = (r: ModelRequest) =>
      r.body.messages.filter((m: { role: string }) => m.role === "tool").at(-1)?.content as
        | string
        | undefined;
    model.route((r) => {
      const result = toolResult(r);
      return result === undefined
        ? { calls: [{ name: "sandbox_run", args: { code: "print(6 * 7)" } }] }
        : { text: result };
    });
    const carried = await startAgentRun(t.client, "Carried", { task: "go" }, { wait: true });
    assert.equal(carried.status, "completed", JSON.stringify(carried));
    assert.equal(JSON.parse(carried.response!).stdout, "42\n");
    const missing = await startAgentRun(t.client, "Missing", { task: "go" }, { wait: true });
    // The model is told, as the tool's error, which packages the image lacks.
    assert.match(missing.response ?? "", /does not carry the pip_packages surely-not-installed-stn/);
  } finally {
    await removeStationContainers(t.home.path("stn.db"));
    await t.close();
    await model.close();
  }
});
