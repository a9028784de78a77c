import { fileURLToPath } from "node:url";
import { relative } from "node:path";
import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { parseAgent } from "../../src/agents/definition/mod.ts";
import { renderAgentPrompt } from "../../src/agents/render.ts";
import { tempHome } from "../helpers/home.ts";
import { startModelServer } from "../helpers/model_server.ts";
import { runStn } from "../helpers/stn.ts";

/** Station's own agent files, as its repository holds them (fixtures/station/all/README.md). */
const ALL = fileURLToPath(new URL("./fixtures/station/all/", import.meta.url));

async function promptFiles(dir: string): Promise<string[]> {
  const found: string[] = [];
  for await (const e of Deno.readDir(dir)) {
    const path = `${dir}/${e.name}`;
    if (e.isDirectory) found.push(...await promptFiles(path));
    else if (e.name.endsWith(".prompt")) found.push(path);
  }
  return found.sort();
}

const load = async (path: string) =>
  await parseAgent(await Deno.readTextFile(path), { environment: "default", path });

Deno.test("station agents: all 133 of Station's .prompt files validate", async () => {
  const files = await promptFiles(ALL.replace(/\/$/, ""));
  assertEquals(files.length, 133);
  const failed: string[] = [];
  for (const f of files) {
    const a = await load(f);
    if (a.errors.length) failed.push(`${relative(ALL, f)}: ${a.errors[0].code}: ${a.errors[0].message}`);
  }
  assertEquals(failed, []);
});

Deno.test("station agents: `sandbox: {mode: docker}` runs as a code-mode sandbox, with a warning saying so", async () => {
  const a = await load(`${ALL}environments/default/agents/incident-investigator.prompt`);
  assertEquals(a.errors, []);
  assertEquals(a.definition?.sandbox?.mode, "code");
  assertEquals(a.definition?.sandbox?.image, "python:3.12-slim");
  const w = a.warnings.find((i) => i.code === "station_docker_sandbox");
  assert(w, JSON.stringify(a.warnings));
  assertEquals(w.path, "/sandbox/mode");
  assertStringIncludes(w.message, "code-mode sandbox");
  assertStringIncludes(w.message, "not carried over");
});

Deno.test("station agents: an input schema requiring userInput is satisfied by the task; a wrong type still fails", async () => {
  const echo = (await load(`${ALL}examples/lattice-lab/agents/echo-agent.prompt`)).definition!;
  const r = await renderAgentPrompt(echo, "hello", {});
  assertEquals(r.messages, [{ role: "user", content: "hello" }]);
  let code = "";
  await renderAgentPrompt(echo, "hello", { userInput: 7 }).catch((e) => code = e.code);
  assertEquals(code, "agent_input_invalid");
});

Deno.test("station agents: `stn agent run echo-agent hello` runs Station's lattice echo agent with the task alone", async () => {
  const model = startModelServer();
  const home = await tempHome();
  try {
    home.writeConfig(
      `ai:\n  provider: openai\n  base_url: ${model.url}\n  api_key: sk-test\nsandbox:\n  enabled: false\n`,
    );
    const dir = home.path("environments", "default", "agents");
    Deno.mkdirSync(dir, { recursive: true });
    Deno.copyFileSync(`${ALL}examples/lattice-lab/agents/echo-agent.prompt`, `${dir}/echo-agent.prompt`);
    model.script({ text: "ECHO FROM test: hello" });
    const r = await runStn(["agent", "run", "echo-agent", "hello"], { env: home.env });
    assertEquals(r.code, 0, r.stderr);
    assertEquals(r.stdout.trim(), "ECHO FROM test: hello");
    const sent = model.requests[0].body.messages;
    assertEquals(sent.at(-1), { role: "user", content: "hello" });
  } finally {
    await model.close();
    await home.cleanup();
  }
});
