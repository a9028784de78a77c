import { join } from "node:path";
import { assert, assertEquals } from "../helpers/assert.ts";
import { openDatabase } from "../../src/db/database.ts";
import { syncAgents } from "../../src/agents/sync.ts";
import { getAgent, getStoredAgent, listAgents } from "../../src/agents/store.ts";

const prompt = (front: string, body = '{{role "user"}}\n{{userInput}}\n') => `---\n${front}\n---\n${body}`;

Deno.test("agent sync: create, unchanged, update, delete by file, against a real SQLite file", async () => {
  const dir = await Deno.makeTempDir({ prefix: "stn-agents-" });
  const agents = join(dir, "env", "agents");
  await Deno.mkdir(agents, { recursive: true });
  const db = openDatabase(join(dir, "station.db"));
  const target = { environment: "default", directory: agents };
  const names = (items: { name: string }[]) => items.map((i) => i.name);
  try {
    await Deno.writeTextFile(join(agents, "alpha.prompt"), prompt("model: openai/gpt-4o-mini\nmax_steps: 3"));
    await Deno.writeTextFile(
      join(agents, "beta.prompt"),
      prompt("agents: [alpha]\nmetadata: {description: B}"),
    );
    const first = await syncAgents(db, target);
    assertEquals([names(first.created), names(first.updated), names(first.unchanged), first.deleted], [
      ["alpha", "beta"],
      [],
      [],
      [],
    ]);
    assertEquals(first.directory, agents);
    const alpha = getAgent(db, "default", "alpha")!;
    assertEquals([alpha.model, alpha.max_steps, alpha.path], [
      "openai/gpt-4o-mini",
      3,
      join(agents, "alpha.prompt"),
    ]);
    assertEquals(getAgent(db, "other", "alpha"), undefined);

    const again = await syncAgents(db, target);
    assertEquals([names(again.created), names(again.unchanged)], [[], ["alpha", "beta"]]);
    const stamp = getStoredAgent(db, "default", "alpha")!.updated_at;

    await Deno.writeTextFile(join(agents, "alpha.prompt"), prompt("model: openai/gpt-4o\nmax_steps: 4"));
    const changed = await syncAgents(db, target);
    assertEquals([names(changed.updated), names(changed.unchanged)], [["alpha"], ["beta"]]);
    const stored = getStoredAgent(db, "default", "alpha")!;
    assertEquals([stored.definition.model, stored.definition.max_steps], ["openai/gpt-4o", 4]);
    assert(stored.updated_at >= stamp && stored.created_at <= stamp);

    // A file made invalid loses its stored agent (its old version must not run; `agent list` shows it
    // invalid); a removed file deletes its agent.
    await Deno.writeTextFile(join(agents, "alpha.prompt"), prompt("max_steps: -1"));
    await Deno.remove(join(agents, "beta.prompt"));
    const broken = await syncAgents(db, target);
    assertEquals(broken.deleted, ["beta"]);
    assertEquals(broken.invalid.map((i) => [i.file, i.errors.map((e) => `${e.code}@${e.line}`)]), [
      [join(agents, "alpha.prompt"), ["invalid_value@2"]],
    ]);
    assertEquals(listAgents(db, "default"), []);

    // Warnings are reported per file; the agent is stored.
    await Deno.writeTextFile(join(agents, "alpha.prompt"), prompt("max_steps: 2\nharness: agentic"));
    const warned = await syncAgents(db, target);
    assertEquals(names(warned.created), ["alpha"]);
    assertEquals(warned.warnings.map((w) => w.warnings.map((x) => x.code)), [["unknown_field"]]);
    assertEquals(getAgent(db, "default", "alpha")!.extra, { harness: "agentic" });

    // The whole folder gone: every agent of the environment goes with it, other environments stay.
    await syncAgents(db, { environment: "other", directory: agents });
    await Deno.remove(agents, { recursive: true });
    const gone = await syncAgents(db, target);
    assertEquals(gone.deleted, ["alpha"]);
    assertEquals([listAgents(db, "default").length, listAgents(db, "other").length], [0, 1]);
  } finally {
    db.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("agent sync: tools are checked against the catalogue given, and config's default max_steps applies", async () => {
  const dir = await Deno.makeTempDir({ prefix: "stn-agents-" });
  const db = openDatabase(join(dir, "station.db"));
  try {
    await Deno.writeTextFile(join(dir, "reader.prompt"), prompt("tools: [__read_file]"));
    await Deno.writeTextFile(join(dir, "writer.prompt"), prompt("tools: [__write_fil]"));
    const report = await syncAgents(db, { environment: "default", directory: dir }, {
      knownTools: new Map([["__read_file", "fs"], ["__write_file", "fs"]]),
      defaultMaxSteps: 11,
    });
    assertEquals(report.created.map((c) => c.name), ["reader"]);
    assertEquals(report.invalid[0].errors.map((e) => [e.code, e.line, e.hint]), [
      ["unknown_tool", 2, "did you mean `__write_file`?"],
    ]);
    assertEquals(getAgent(db, "default", "reader")!.max_steps, 11);
  } finally {
    db.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("agent sync: tools of servers not discovered yet are warnings; a file refused loses its stored version", async () => {
  const dir = await Deno.makeTempDir({ prefix: "stn-agents-" });
  const db = openDatabase(join(dir, "station.db"));
  const target = { environment: "default", directory: dir };
  try {
    await Deno.writeTextFile(join(dir, "writer.prompt"), prompt("tools: [__write_file]"));
    const pending = await syncAgents(db, target, { knownTools: new Map(), pendingServers: ["fs"] });
    assertEquals(pending.created.map((c) => c.name), ["writer"]);
    assertEquals(pending.warnings[0].warnings.map((w) => [w.code, w.line]), [["tool_not_discovered", 2]]);
    assert(pending.warnings[0].warnings[0].message.includes("MCP server fs not discovered"));

    // The stored version must not stay runnable once the file is invalid.
    await Deno.writeTextFile(join(dir, "writer.prompt"), prompt("max_steps: 0"));
    const refused = await syncAgents(db, target);
    assertEquals([refused.invalid.length, refused.deleted], [1, []]);
    assertEquals(getStoredAgent(db, "default", "writer"), undefined);
  } finally {
    db.close();
    await Deno.remove(dir, { recursive: true });
  }
});
