import { join } from "node:path";
import { assertEquals } from "../../helpers/assert.ts";
import { tempHome } from "../../helpers/home.ts";
import { startTestStation } from "../../helpers/station.ts";
import { getAgent, listAgents } from "../../../src/client/agents.ts";
import { listWorkflows, syncWorkflows } from "../../../src/client/workflows.ts";
import type { StationError } from "../../../src/errors.ts";

const AGENT = `---
metadata:
  description: "Summarises an alert"
  tags: [sre]
model: openai/gpt-4o-mini
max_steps: 4
sandbox: python
schedule:
  cron: "0 9 * * 1-5"
---
{{role "system"}}
Summarise.
{{role "user"}}
{{userInput}}
`;

const workflow = (agent: string) =>
  `id: uses-${agent.replace(/[^a-z]/g, "")}
states:
  - id: ask
    type: agent
    agent: ${agent}
    task: "hello"
`;

Deno.test("API: agents are synced at start and by POST /api/v1/sync, listed, shown, 404 with a hint", async () => {
  const home = await tempHome();
  const env = home.path("environments", "default");
  await Deno.mkdir(join(env, "agents"), { recursive: true });
  await Deno.mkdir(join(env, "workflows"), { recursive: true });
  await Deno.writeTextFile(join(env, "agents", "summarizer.prompt"), AGENT);
  await Deno.writeTextFile(join(env, "agents", "broken.prompt"), "---\nmax_steps: many\n---\nhi\n");
  await Deno.writeTextFile(join(env, "workflows", "good.workflow.yaml"), workflow("summarizer"));
  await Deno.writeTextFile(join(env, "workflows", "typo.workflow.yaml"), workflow("sumarizer"));
  const t = await startTestStation({ home });
  try {
    const c = t.client;
    // Synced at start: the valid agent, and the workflow whose agent exists.
    const list = await listAgents(c);
    assertEquals(list.environment, "default");
    assertEquals(list.agents.map((a) => [a.name, a.model, a.max_steps, a.sandbox, a.schedule, a.tags]), [
      ["summarizer", "openai/gpt-4o-mini", 4, true, "0 9 * * 1-5", ["sre"]],
    ]);
    assertEquals((await listWorkflows(c)).map((w) => w.id), ["uses-summarizer"]);

    const shown = await getAgent(c, "summarizer");
    assertEquals(shown.agent.description, "Summarises an alert");
    assertEquals(shown.agent.source, AGENT);
    assertEquals(shown.agent.sandbox?.runtime, "python");

    const missing = await getAgent(c, "sumarizer").then(() => undefined, (e: StationError) => e);
    assertEquals([missing?.code, missing?.status, missing?.hint], [
      "agent_not_found",
      404,
      "did you mean `summarizer`?",
    ]);
    // Station's agent names may hold spaces (file names); the path carries them encoded.
    await Deno.writeTextFile(join(env, "agents", "Cost Spike.prompt"), "---\nmax_steps: 1\n---\nhi\n");
    await syncWorkflows(c);
    assertEquals((await getAgent(c, "Cost Spike")).agent.name, "Cost Spike");
    await Deno.remove(join(env, "agents", "Cost Spike.prompt"));
    const other = await c.fetch("GET", "/api/v1/agents?environment=nowhere");
    assertEquals([other.status, (await other.json()).agents], [200, []]);

    // POST /api/v1/sync reports the agents section; the typo'd workflow is invalid with did-you-mean.
    await Deno.writeTextFile(join(env, "agents", "extra.prompt"), "---\nmax_steps: 2\n---\nhi\n");
    const report = await syncWorkflows(c);
    const agents = report.agents!;
    assertEquals(agents.created.map((a) => a.name), ["extra"]);
    assertEquals(agents.unchanged.map((a) => a.name), ["summarizer"]);
    assertEquals(agents.invalid.map((i) => [i.file, i.errors[0].code, i.errors[0].line]), [
      [join(env, "agents", "broken.prompt"), "invalid_value", 2],
    ]);
    const typo = report.invalid.find((i) => i.file.endsWith("typo.workflow.yaml"))!;
    assertEquals(typo.errors.map((e) => [e.code, e.path, e.line, e.hint]), [
      ["unknown_agent", "/states/0/agent", 5, "did you mean `summarizer`?"],
    ]);

    // Removing the file removes the agent.
    await Deno.remove(join(env, "agents", "extra.prompt"));
    assertEquals((await syncWorkflows(c)).agents!.deleted, ["extra"]);
    const gone = await getAgent(c, "extra").then(() => undefined, (e: StationError) => e);
    assertEquals([gone?.code, gone?.hint], ["agent_not_found", "agents there: summarizer"]);
  } finally {
    await t.close();
    await home.cleanup();
  }
});
