/**
 * Records the cassettes of the example environment's agent tests (examples/environments/default/tests/)
 * against the scripted local model server of the tests — never a real provider — and writes them into the
 * example: `deno run -A scripts/record_example_cassettes.ts`. It syncs a copy of the environment (starting
 * the filesystem MCP server from npm once, to learn its tools) on a scratch STATION_HOME.
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type ModelRequest, startModelServer } from "../tests/helpers/model_server.ts";
import { STN_RUN_ARGS } from "../src/build/stn_flags.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const EXAMPLE = join(ROOT, "examples", "environments", "default");

/** The scripted answers: the auditor lists its folder and reports; the others answer in a sentence. */
function answer(r: ModelRequest) {
  const messages = r.body.messages as Array<{ role: string; content: unknown }>;
  const system = JSON.stringify(messages[0]?.content ?? "");
  if (system.includes("You audit a folder")) {
    if (!messages.some((m) => m.role === "tool")) {
      return { calls: [{ name: "__list_directory", args: { path: "/tmp" } }] };
    }
    return {
      text: JSON.stringify({
        summary: "The folder holds an .env file with what looks like a key. Nothing else stands out.",
        severity: "high",
        findings: [{ path: ".env", issue: "a secret in a plain file" }],
      }),
    };
  }
  if (system.includes("concise assistant")) {
    const task = JSON.stringify(messages.at(-1)?.content ?? "");
    return task.includes("status note")
      ? { text: "Audit found a secret in .env (high). Follow-up analysis was declined." }
      : {
        text:
          "A durable workflow keeps its progress in storage, so it resumes where it stopped after a crash.",
      };
  }
  return { text: "{}" };
}

const model = startModelServer();
model.route(answer);
const home = await Deno.makeTempDir({ prefix: "stn-record-" });
try {
  const env = join(home, "environments", "default");
  await Deno.mkdir(join(home, "environments"));
  await new Deno.Command("cp", { args: ["-r", EXAMPLE, join(home, "environments")] }).output();
  await Deno.writeTextFile(
    join(home, "config.yaml"),
    `ai:\n  provider: openai\n  base_url: ${model.url}\n  api_key: sk-scripted\n`,
  );
  const stn = (...args: string[]) =>
    new Deno.Command(Deno.execPath(), {
      args: [...STN_RUN_ARGS, join(ROOT, "main.ts"), ...args],
      env: { STATION_HOME: home, NO_COLOR: "1" },
      stdout: "inherit",
      stderr: "inherit",
    }).output();
  if (!(await stn("sync", "--trust")).success) throw new Error("stn sync failed");
  const run = await stn("test", "--update", "--filter", "agents.test.yaml");
  if (!run.success) throw new Error("stn test --update failed");
  for await (const e of Deno.readDir(join(env, "tests", "cassettes"))) {
    await Deno.mkdir(join(EXAMPLE, "tests", "cassettes"), { recursive: true });
    await Deno.copyFile(join(env, "tests", "cassettes", e.name), join(EXAMPLE, "tests", "cassettes", e.name));
    console.log(`wrote examples/environments/default/tests/cassettes/${e.name}`);
  }
} finally {
  await Deno.remove(home, { recursive: true });
  await model.close();
}
