import { validateSource } from "../../../src/workflows/definition/load.ts";
import { assert, assertEquals } from "../../helpers/assert.ts";

/** The first error of a YAML definition, as the validator reports it. */
function firstError(yaml: string) {
  const r = validateSource(yaml, { fileName: "x.workflow.yaml" });
  assert(!r.valid, "expected the definition to be invalid");
  return r.errors[0];
}

Deno.test("validate: await and its aliases load into one type with event, match, timeout, onTimeout", () => {
  for (const type of ["await", "await.signal", "await.event", "wait_for_event"]) {
    const r = validateSource(
      `id: x\nstates:\n  - id: w\n    type: ${type}\n    event: order.paid\n    match: event.data.id = id\n` +
        `    timeout: 5m\n    onTimeout: late\n    next: done\n  - { id: done, type: inject, data: {} }\n` +
        `  - { id: late, type: inject, data: {} }\n`,
    );
    assert(r.valid, `${type}: ${JSON.stringify(r.errors)}`);
    assertEquals(r.definition!.states[0].type, "await");
  }
});

Deno.test("validate: await and triggers errors come with codes, paths, lines and columns", () => {
  const cases: { yaml: string; code: string; path: string; line: number; column?: number }[] = [
    {
      yaml: "id: x\nstates:\n  - id: w\n    type: await\n    event: go\n    matches: x = 1\n",
      code: "unknown_field",
      path: "/states/0/matches",
      line: 6,
    },
    {
      yaml: "id: x\nstates:\n  - id: w\n    type: await\n    event: go\n    match: 'event.data.id == id'\n",
      code: "invalid_expression",
      path: "/states/0/match",
      line: 6,
      column: 28,
    },
    {
      yaml: "id: x\nstates:\n  - id: w\n    type: await\n",
      code: "missing_field",
      path: "/states/0/event",
      line: 3,
    },
    {
      yaml: "id: x\nstates:\n  - id: w\n    type: await\n    event: go\n    onTimeout: w\n",
      code: "missing_field",
      path: "/states/0/timeout",
      line: 3,
    },
    {
      yaml:
        "id: x\nstates:\n  - id: w\n    type: await\n    event: go\n    timeout: 1m\n    onTimeout: nowhere\n",
      code: "unknown_target",
      path: "/states/0/onTimeout",
      line: 7,
    },
    {
      yaml: "id: x\ntriggers:\n  - event: git.push\n    if: \"event.data.ref = 'main' &&\"\n" +
        "states:\n  - { id: a, type: inject, data: {} }\n",
      code: "invalid_expression",
      path: "/triggers/0/if",
      line: 4,
    },
    {
      yaml:
        "id: x\ntriggers:\n  - event: git.push\n    when: x\nstates:\n  - { id: a, type: inject, data: {} }\n",
      code: "unknown_field",
      path: "/triggers/0/when",
      line: 4,
    },
    {
      yaml: "id: x\ntriggers:\n  - event: git.push\n    input: { sha: 'event.data.(' }\n" +
        "states:\n  - { id: a, type: inject, data: {} }\n",
      code: "invalid_expression",
      path: "/triggers/0/input/sha",
      line: 4,
    },
  ];
  for (const c of cases) {
    const e = firstError(c.yaml);
    assertEquals([e.code, e.path, e.line], [c.code, c.path, c.line], `${c.path}: ${JSON.stringify(e)}`);
    if (c.column !== undefined) assertEquals(e.column, c.column, JSON.stringify(e));
  }
});
