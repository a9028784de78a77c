import { StationClient } from "../../src/client/http.ts";
import { listAgentRuns } from "../../src/client/agent_runs.ts";
import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { tempHome } from "../helpers/home.ts";
import { startModelServer } from "../helpers/model_server.ts";
import { runStn, startServe, waitFor } from "../helpers/stn.ts";

const ticker = (schedule: string) =>
  `---
model: openai/test-model
schedule: ${schedule}
---
{{role "system"}}
You report to {{who}}.
{{role "user"}}
{{userInput}}
`;

Deno.test("e2e: a .prompt schedule runs the agent on its cron (trigger schedule); disabling or removing the file at sync stops it", async () => {
  const model = startModelServer();
  model.route(() => ({ text: "tick done" }));
  const home = await tempHome();
  home.writeConfig(
    `ai:\n  provider: openai\n  base_url: ${model.url}\n  api_key: sk-test\nsandbox:\n  enabled: false\n`,
  );
  const dir = home.path("environments", "default", "agents");
  Deno.mkdirSync(dir, { recursive: true });
  const file = `${dir}/Ticker.prompt`;
  const every = (enabled = true) =>
    `{cron: "* * * * * *", enabled: ${enabled}, task: "tick", variables: {who: "the cron"}}`;
  Deno.writeTextFileSync(file, ticker(every()));
  const serve = await startServe({ env: home.env, home: home.home });
  const client = new StationClient(serve.url);
  const runs = async () => (await listAgentRuns(client, { agent: "Ticker" })).runs;
  const sync = async () => {
    const r = await runStn(["sync"], { env: home.env });
    assertEquals(r.code, 0, r.stderr);
  };
  /** The run count once the scheduler has seen the sync (it reconciles every ~2 s), and that it stays put. */
  const stopped = async () => {
    await new Promise((r) => setTimeout(r, 3000));
    const settled = (await runs()).length;
    await new Promise((r) => setTimeout(r, 1200));
    assertEquals((await runs()).length, settled, "no run started after the schedule went away");
    return settled;
  };
  try {
    await sync();
    assert(await waitFor(async () => (await runs()).length >= 2, 15_000), "two scheduled runs");
    const [run] = await runs();
    assertEquals([run.trigger, run.task, run.variables, run.status === "failed"], [
      "schedule",
      "tick",
      { who: "the cron" },
      false,
    ]);
    assertStringIncludes(String(model.requests[0].body.messages[0].content), "You report to the cron.");
    const inspect = await runStn(["agent", "inspect", run.run_id], { env: home.env });
    assertStringIncludes(inspect.stdout, "trigger:  schedule");

    Deno.writeTextFileSync(file, ticker(every(false)));
    await sync();
    const afterDisable = await stopped();

    Deno.writeTextFileSync(file, ticker(every()));
    await sync();
    assert(await waitFor(async () => (await runs()).length > afterDisable, 15_000), "enabled again, it runs");

    Deno.removeSync(file);
    await sync();
    await stopped();
    assert((await runs()).every((r) => r.trigger === "schedule"));
  } finally {
    await serve.stop();
    await model.close();
    await home.cleanup();
  }
});
