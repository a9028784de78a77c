import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { assert, assertEquals } from "../helpers/assert.ts";
import { loadWorkflowFile } from "../../src/workflows/definition/load.ts";
import type { State } from "../../src/workflows/definition/schema.ts";
import { stepTypeNames } from "../../src/workflows/steps/registry.ts";

const DIR = fileURLToPath(new URL("../../examples/workflows/", import.meta.url));

/** Every state, nested blocks included. */
function allStates(states: State[]): State[] {
  const out: State[] = [];
  for (const s of states) {
    out.push(s);
    if (s.type === "parallel") { for (const b of s.branches) out.push(...allStates(b.states)); }
    if (s.type === "foreach") out.push(...allStates(s.iterator.states));
    if (s.type === "try") {
      for (const b of [s.try, s.catch, s.finally]) if (b) out.push(...allStates(b.states));
    }
  }
  return out;
}

Deno.test("examples: at least 8, all valid, together using every state type and the top-level features", async () => {
  const files = [...Deno.readDirSync(DIR)].map((e) => e.name).filter((n) =>
    /\.workflow\.(ya?ml|json)$/.test(n)
  );
  assert(files.length >= 8, `${files.length} examples`);
  const types = new Set<string>();
  const features = new Set<string>();
  const readme = Deno.readTextFileSync(join(DIR, "README.md"));
  for (const f of files) {
    const r = await loadWorkflowFile(join(DIR, f));
    assert(r.valid, `${f}: ${JSON.stringify(r.errors)}`);
    // Both say what stn does not check yet; every other warning is a flaw in the example.
    const expected = ["agent_not_checked", "approvers_not_enforced"];
    assertEquals(r.warnings.filter((w) => !expected.includes(w.code)), [], f);
    assert(readme.includes(`\`${f}\``), `examples README lacks a line for ${f}`);
    const d = r.definition!;
    for (const k of ["inputSchema", "outputSchema", "defaults", "schedule", "start", "triggers"] as const) {
      if (d[k]) features.add(k);
    }
    for (const s of allStates(d.states)) {
      types.add(s.type);
      for (const k of ["retry", "timeout", "output", "resultPath", "end"] as const) {
        if (s[k] !== undefined) features.add(k);
      }
    }
  }
  assertEquals([...types].sort(), stepTypeNames().sort());
  assertEquals([...features].sort(), [
    "defaults",
    "end",
    "inputSchema",
    "output",
    "outputSchema",
    "resultPath",
    "retry",
    "schedule",
    "start",
    "timeout",
    "triggers",
  ]);
});
