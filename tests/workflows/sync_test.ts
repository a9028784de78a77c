import { join } from "node:path";
import { assert, assertEquals, assertThrows } from "../helpers/assert.ts";
import { tempHome } from "../helpers/home.ts";
import { openDatabase } from "../../src/db/database.ts";
import { StationError } from "../../src/errors.ts";
import { validateSource } from "../../src/workflows/definition/load.ts";
import { WorkflowStore } from "../../src/workflows/store.ts";
import { syncEnvironment } from "../../src/environments/declarative_sync.ts";

const wf = (id: string, data: string, label = "1.0") =>
  `id: ${id}\nversion: "${label}"\nstates:\n  - id: s\n    type: inject\n    data: {v: ${data}}\n`;

function def(text: string) {
  const r = validateSource(text);
  assert(r.valid, JSON.stringify(r.errors));
  return r.definition!;
}

Deno.test("store: versions by content hash; same label with new content is a new version; disable/enable/delete", async () => {
  const home = await tempHome();
  const db = openDatabase(home.path("stn.db"));
  try {
    const store = new WorkflowStore(db);
    const a = store.save(def(wf("alpha", "1")), { source: "api" });
    assertEquals([a.outcome, a.version], ["created", 1]);
    const same = store.save(def(wf("alpha", "1")), { source: "api" });
    assertEquals([same.outcome, same.version], ["unchanged", 1]);
    // Key order does not change the content hash.
    const reordered = store.save(
      def("states:\n  - {data: {v: 1}, type: inject, id: s}\nversion: '1.0'\nid: alpha\n"),
      {
        source: "api",
      },
    );
    assertEquals(reordered.outcome, "unchanged");
    // The Go project ignored a change when the `version:` label was unchanged; here content decides.
    const changed = store.save(def(wf("alpha", "2", "1.0")), { source: "api" });
    assertEquals([changed.outcome, changed.version], ["updated", 2]);
    assertEquals(store.get("alpha").version, 2);
    assertEquals((store.get("alpha", 1).definition.states[0] as { data: unknown }).data, { v: 1 });
    assertEquals(store.versions("alpha").map((v) => [v.version, v.label]), [[1, "1.0"], [2, "1.0"]]);

    assertEquals(store.disable("alpha").status, "disabled");
    assertEquals(store.list({ status: "active" }), []);
    assertEquals(store.enable("alpha").status, "active");
    const missing = assertThrows(() => store.get("alpha", 9), StationError) as StationError;
    assertEquals([missing.code, missing.status], ["workflow_version_not_found", 404]);
    store.delete("alpha");
    assertEquals(
      (assertThrows(() => store.record("alpha"), StationError) as StationError).code,
      "workflow_not_found",
    );
    const rows = db.prepare("SELECT count(*) AS n FROM workflow_versions WHERE workflow_id = 'alpha'")
      .get() as { n: number };
    assertEquals(rows.n, 0);
  } finally {
    db.close();
    await home.cleanup();
  }
});

Deno.test("sync: add, change, unchanged, remove and invalid files, each with its versions and statuses", async () => {
  const home = await tempHome();
  const db = openDatabase(home.path("stn.db"));
  const envs = home.path("environments");
  const dir = join(envs, "prod", "workflows");
  await Deno.mkdir(dir, { recursive: true });
  await Deno.mkdir(join(envs, "staging", "workflows"), { recursive: true });
  const write = (name: string, text: string) => Deno.writeTextFile(join(dir, name), text);
  try {
    const store = new WorkflowStore(db);
    // A workflow from the API and one from another environment: sync of prod must never touch them.
    store.save(def(wf("from-api", "0")), { source: "api" });
    store.save(def(wf("staging-only", "0")), { source: "file", environment: "staging", path: "/x" });

    // add
    await write("one.workflow.yaml", wf("one", "1"));
    await write("two.workflow.yml", "states:\n  - {id: s, type: inject, data: {v: 2}}\n"); // id from the file name
    await write(
      "three.workflow.json",
      JSON.stringify({ id: "three", states: [{ id: "s", type: "inject", data: {} }] }),
    );
    await write("notes.md", "not a workflow");
    let r = await syncEnvironment(store, envs, "prod");
    assertEquals(r.created.map((c) => [c.id, c.version]), [["one", 1], ["three", 1], ["two", 1]]);
    assertEquals([r.updated, r.unchanged, r.disabled, r.invalid], [[], [], [], []]);
    assertEquals(store.record("two").source_path, join(dir, "two.workflow.yml"));

    // unchanged: re-sync creates nothing
    r = await syncEnvironment(store, envs, "prod");
    assertEquals(r.unchanged.map((c) => c.id), ["one", "three", "two"]);
    assertEquals([r.created.length, r.updated.length], [0, 0]);
    assertEquals(store.versions("one").length, 1);

    // change: same `version:` label, new content → version 2
    await write("one.workflow.yaml", wf("one", "99", "1.0"));
    r = await syncEnvironment(store, envs, "prod");
    assertEquals(r.updated.map((c) => [c.id, c.version]), [["one", 2]]);
    assertEquals(store.get("one").version, 2);

    // invalid: reported with file:line, skipped; its stored workflow and the others are untouched
    await write("two.workflow.yml", "states:\n  - {id: s, type: injekt, data: {}}\n");
    await write("broken.workflow.yaml", "id: broken\nstates: [\n");
    r = await syncEnvironment(store, envs, "prod");
    assertEquals(r.invalid.map((i) => [i.file.split("/").pop(), i.errors[0].code, i.errors[0].line]), [
      ["broken.workflow.yaml", "parse_error", 3],
      ["two.workflow.yml", "unknown_type", 2],
    ]);
    assertEquals(r.disabled, []);
    assertEquals(store.record("two").status, "active");
    assertEquals(store.record("two").version, 1);
    assert(!store.has("broken"));

    // remove: a deleted file disables its workflow, only for this environment's files
    await Deno.remove(join(dir, "three.workflow.json"));
    r = await syncEnvironment(store, envs, "prod");
    assertEquals(r.disabled, ["three"]);
    assertEquals(store.record("three").status, "disabled");
    assertEquals(store.record("from-api").status, "active");
    assertEquals(store.record("staging-only").status, "active");

    // the file comes back: re-enabled, same version (content unchanged)
    await write(
      "three.workflow.json",
      JSON.stringify({ id: "three", states: [{ id: "s", type: "inject", data: {} }] }),
    );
    r = await syncEnvironment(store, envs, "prod");
    assertEquals(r.enabled, ["three"]);
    assertEquals([store.record("three").status, store.record("three").version], ["active", 1]);

    // a workflow a user disabled stays disabled through syncs, even when its file changes
    store.disable("three");
    r = await syncEnvironment(store, envs, "prod");
    assertEquals([r.unchanged.map((u) => u.id).includes("three"), r.enabled], [true, []]);
    assertEquals(store.record("three").status, "disabled");
    await write(
      "three.workflow.json",
      JSON.stringify({ id: "three", states: [{ id: "s2", type: "inject", data: {} }] }),
    );
    r = await syncEnvironment(store, envs, "prod");
    assertEquals(r.updated.map((u) => [u.id, u.version]), [["three", 2]]);
    assertEquals([store.record("three").status, store.record("three").disabled_reason], ["disabled", "user"]);

    // two files claiming one id: the second is invalid
    await write("zz-dup.workflow.yaml", wf("one", "99", "1.0"));
    r = await syncEnvironment(store, envs, "prod");
    assertEquals(r.invalid.map((i) => i.errors[0].code).sort(), [
      "duplicate_workflow_id",
      "parse_error",
      "unknown_type",
    ]);

    // an unknown environment is an error, not an empty sync that disables everything
    const err = await syncEnvironment(store, envs, "nope").catch((e) => e) as StationError;
    assertEquals([err.code, err.status], ["environment_not_found", 404]);
  } finally {
    db.close();
    await home.cleanup();
  }
});

Deno.test("sync: symlinked files are read; a dangling link is reported and keeps its stored workflow", async () => {
  const home = await tempHome();
  const db = openDatabase(home.path("stn.db"));
  const envs = home.path("environments");
  const dir = join(envs, "dev", "workflows");
  await Deno.mkdir(dir, { recursive: true });
  try {
    const store = new WorkflowStore(db);
    const target = home.path("shared.yaml");
    await Deno.writeTextFile(target, wf("shared", "1"));
    await Deno.symlink(target, join(dir, "shared.workflow.yaml"));
    let r = await syncEnvironment(store, envs, "dev");
    assertEquals(r.created.map((c) => c.id), ["shared"]);
    await Deno.remove(target);
    r = await syncEnvironment(store, envs, "dev");
    assertEquals(r.invalid.map((i) => i.errors[0].code), ["file_unreadable"]);
    assertEquals([r.disabled, store.record("shared").status], [[], "active"]);
  } finally {
    db.close();
    await home.cleanup();
  }
});
