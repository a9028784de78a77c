import { fileURLToPath } from "node:url";
import { parseDocument } from "yaml";
import { validateSource } from "../../../src/workflows/definition/load.ts";
import { migrateText } from "../../../src/workflows/migrate/migrate.ts";
import { assert, assertEquals } from "../../helpers/assert.ts";
import { startTestStation } from "../../helpers/station.ts";
import { waitRun } from "../helpers.ts";

const GUIDE = fileURLToPath(new URL("../../../docs/migrating-from-station.md", import.meta.url));

/** YAML text in the yaml library's own layout, comments kept. */
const canonical = (text: string) => parseDocument(text).toString({ lineWidth: 0 });

/** The guide's examples: `<!-- before|after: name -->` before a yaml block, `<!-- run: name {…} -->`. */
function examples(md: string) {
  const found = new Map<
    string,
    { before?: string; after?: string; run?: { input: Record<string, unknown>; result: unknown } }
  >();
  const get = (name: string) => found.get(name) ?? found.set(name, {}).get(name)!;
  for (const m of md.matchAll(/<!-- (before|after): ([\w-]+) -->\s*```yaml\n([\s\S]*?)```/g)) {
    get(m[2])[m[1] as "before" | "after"] = m[3];
  }
  for (const m of md.matchAll(/<!-- run: ([\w-]+) (\{.*\}) -->/g)) get(m[1]).run = JSON.parse(m[2]);
  return found;
}

Deno.test("docs/migrating-from-station.md: each before migrates to its after, which validates and runs as shown", async () => {
  const found = examples(Deno.readTextFileSync(GUIDE));
  assert(found.size >= 3, `${found.size} examples`);
  const t = await startTestStation();
  try {
    for (const [name, ex] of found) {
      assert(ex.before && ex.after && ex.run, `${name}: needs before, after and run`);
      const migrated = migrateText(ex.before, `${name}.workflow.yaml`);
      assertEquals(migrated.issues.filter((i) => i.severity === "error"), [], name);
      // Compared as YAML documents (comments included): deno fmt re-spaces the guide's flow collections.
      assertEquals(canonical(migrated.text), canonical(ex.after), name);
      const checked = validateSource(ex.after, { fileName: `${name}.workflow.yaml` });
      assert(checked.valid, `${name}: ${JSON.stringify(checked.errors)}`);
      const run = await t.station.ctx.engine.startRun({
        definition: checked.definition!,
        input: ex.run.input,
      });
      const done = await waitRun(t.station.ctx.engine, run.id);
      assertEquals(done.status, "completed", `${name}: ${done.error}`);
      assertEquals(JSON.parse(done.result!), ex.run.result, name);
    }
  } finally {
    await t.close();
  }
});
