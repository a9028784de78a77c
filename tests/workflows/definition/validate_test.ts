import { assert, assertEquals } from "../../helpers/assert.ts";
import { validateSource } from "../../../src/workflows/definition/load.ts";
import { validateDefinition } from "../../../src/workflows/definition/validate.ts";

/** One invalid definition: its YAML, and the first error's expected code, path and line. */
interface Case {
  name: string;
  yaml: string;
  code: string;
  path: string;
  line?: number;
  hint?: string;
}

const ok = "  - id: done\n    type: inject\n    data: {ok: true}\n";

const CASES: Case[] = [
  {
    name: "unparseable YAML",
    yaml: "id: x\nstates: [\n  - id: a\n",
    code: "parse_error",
    path: "/",
    line: 3,
  },
  { name: "tab indentation", yaml: "id: x\nstates:\n\t- id: a\n", code: "parse_error", path: "/", line: 3 },
  { name: "not a mapping", yaml: "- a\n- b\n", code: "invalid_definition", path: "/" },
  { name: "empty file", yaml: "", code: "invalid_definition", path: "/" },
  { name: "missing id", yaml: "states:\n" + ok, code: "missing_id", path: "/id", line: 1 },
  { name: "invalid id", yaml: "id: Deploy Prod\nstates:\n" + ok, code: "invalid_id", path: "/id", line: 1 },
  { name: "missing states", yaml: "id: x\nname: X\n", code: "missing_states", path: "/states", line: 1 },
  { name: "empty states", yaml: "id: x\nstates: []\n", code: "missing_states", path: "/states", line: 2 },
  {
    name: "unknown top-level field",
    yaml: "id: x\ndescripton: hi\nstates:\n" + ok,
    code: "unknown_field",
    path: "/descripton",
    line: 2,
    hint: "`description`",
  },
  {
    name: "state not a mapping",
    yaml: "id: x\nstates:\n  - just-a-string\n",
    code: "invalid_state",
    path: "/states/0",
    line: 3,
  },
  {
    name: "missing state id",
    yaml: "id: x\nstates:\n  - type: inject\n    data: {}\n",
    code: "missing_state_id",
    path: "/states/0",
    line: 3,
  },
  {
    name: "missing type",
    yaml: "id: x\nstates:\n  - id: a\n    next: b\n",
    code: "missing_type",
    path: "/states/0",
    line: 3,
  },
  {
    name: "unknown type with near miss",
    yaml: "id: x\nstates:\n  - id: a\n    type: tranform\n",
    code: "unknown_type",
    path: "/states/0/type",
    line: 4,
    hint: "`transform`",
  },
  {
    name: "try_catch is not a type",
    yaml: "id: x\nstates:\n  - id: a\n    type: try_catch\n",
    code: "unknown_type",
    path: "/states/0/type",
    line: 4,
  },
  {
    name: "operation without a task",
    yaml: "id: x\nstates:\n  - id: a\n    type: operation\n",
    code: "unknown_type",
    path: "/states/0/type",
    line: 4,
  },
  {
    name: "operation with custom.run",
    yaml: "id: x\nstates:\n  - id: a\n    type: operation\n    input:\n      task: custom.run\n",
    code: "unknown_type",
    path: "/states/0/input/task",
    line: 6,
  },
  {
    name: "unknown state field near miss",
    yaml: "id: x\nstates:\n  - id: a\n    type: transform\n    expresion: a\n",
    code: "unknown_field",
    path: "/states/0/expresion",
    line: 5,
    hint: "`expression`",
  },
  {
    name: "field of another type",
    yaml: "id: x\nstates:\n  - id: a\n    type: inject\n    data: {}\n    expression: a\n",
    code: "unknown_field",
    path: "/states/0/expression",
    line: 6,
  },
  {
    name: "duplicate id",
    yaml:
      "id: x\nstates:\n  - id: a\n    type: inject\n    data: {}\n  - id: a\n    type: inject\n    data: {}\n",
    code: "duplicate_id",
    path: "/states/1/id",
    line: 6,
  },
  {
    name: "duplicate id across nested block",
    yaml:
      "id: x\nstates:\n  - id: a\n    type: try\n    try:\n      states:\n        - id: a\n          type: inject\n          data: {}\n",
    code: "duplicate_id",
    path: "/states/0/try/states/0/id",
    line: 7,
  },
  {
    name: "unknown start",
    yaml: "id: x\nstart: nope\nstates:\n" + ok,
    code: "unknown_target",
    path: "/start",
    line: 2,
  },
  {
    name: "unknown next with near miss",
    yaml: "id: x\nstates:\n  - id: a\n    type: inject\n    data: {}\n    next: dnoe\n" + ok,
    code: "unknown_target",
    path: "/states/0/next",
    line: 6,
    hint: "`done`",
  },
  {
    name: "unknown transition (Go spelling) points at transition",
    yaml: "id: x\nstates:\n  - id: a\n    type: inject\n    data: {}\n    transition: nope\n",
    code: "unknown_target",
    path: "/states/0/transition",
    line: 6,
  },
  {
    name: "unknown switch condition target",
    yaml:
      "id: x\nstates:\n  - id: a\n    type: switch\n    conditions:\n      - if: 'n > 1'\n        next: nope\n    defaultNext: done\n" +
      ok,
    code: "unknown_target",
    path: "/states/0/conditions/0/next",
    line: 7,
  },
  {
    name: "unknown defaultNext",
    yaml:
      "id: x\nstates:\n  - id: a\n    type: switch\n    conditions:\n      - if: 'n > 1'\n        next: done\n    defaultNext: nope\n" +
      ok,
    code: "unknown_target",
    path: "/states/0/defaultNext",
    line: 8,
  },
  {
    name: "unknown onReject",
    yaml: "id: x\nstates:\n  - id: a\n    type: human_approval\n    message: ok?\n    onReject: nope\n",
    code: "unknown_target",
    path: "/states/0/onReject",
    line: 6,
  },
  {
    name: "unknown onTimeout",
    yaml: "id: x\nstates:\n  - id: a\n    type: human_approval\n    message: ok?\n    onTimeout: nope\n",
    code: "unknown_target",
    path: "/states/0/onTimeout",
    line: 6,
  },
  {
    name: "next into another block",
    yaml:
      "id: x\nstates:\n  - id: a\n    type: foreach\n    itemsPath: items\n    iterator:\n      states:\n        - id: inner\n          type: inject\n          data: {}\n          next: b\n  - id: b\n    type: inject\n    data: {}\n",
    code: "unknown_target",
    path: "/states/0/iterator/states/0/next",
    line: 11,
    hint: "another block",
  },
  {
    name: "unknown nested block start",
    yaml:
      "id: x\nstates:\n  - id: p\n    type: parallel\n    branches:\n      - name: one\n        start: zzz\n        states:\n          - id: s1\n            type: inject\n            data: {}\n",
    code: "unknown_target",
    path: "/states/0/branches/0/start",
    line: 7,
  },
  {
    name: "invalid timeout duration",
    yaml: "id: x\nstates:\n  - id: a\n    type: inject\n    data: {}\n    timeout: 5 minutes\n",
    code: "invalid_duration",
    path: "/states/0/timeout",
    line: 6,
  },
  {
    name: "invalid timer duration",
    yaml: "id: x\nstates:\n  - id: a\n    type: sleep\n    duration: soon\n",
    code: "invalid_duration",
    path: "/states/0/duration",
    line: 5,
  },
  {
    name: "invalid retry interval",
    yaml:
      "id: x\nstates:\n  - id: a\n    type: inject\n    data: {}\n    retry:\n      max_attempts: 3\n      initial_interval: fast\n",
    code: "invalid_duration",
    path: "/states/0/retry/initial_interval",
    line: 8,
  },
  {
    name: "unknown retry field",
    yaml: "id: x\nstates:\n  - id: a\n    type: inject\n    data: {}\n    retry:\n      jitter: true\n",
    code: "unknown_field",
    path: "/states/0/retry/jitter",
    line: 7,
  },
  {
    name: "invalid defaults timeout",
    yaml: "id: x\ndefaults:\n  timeout: forever\nstates:\n" + ok,
    code: "invalid_duration",
    path: "/defaults/timeout",
    line: 3,
  },
  {
    name: "invalid cron",
    yaml: "id: x\nschedule:\n  cron: '61 * * * *'\nstates:\n" + ok,
    code: "invalid_cron",
    path: "/schedule/cron",
    line: 3,
  },
  {
    name: "invalid time zone",
    yaml: "id: x\nschedule:\n  cron: '0 9 * * *'\n  timezone: Mars/Olympus\nstates:\n" + ok,
    code: "invalid_timezone",
    path: "/schedule/timezone",
    line: 4,
  },
  {
    name: "invalid cron in a Go cron start state",
    yaml: "id: x\nstates:\n  - id: tick\n    type: cron\n    cron: 'every day'\n    next: done\n" + ok,
    code: "invalid_cron",
    path: "/states/0/cron",
    line: 5,
  },
  {
    name: "invalid input JSON Schema",
    yaml: "id: x\ninputSchema:\n  type: object\n  properties:\n    n:\n      type: integr\nstates:\n" + ok,
    code: "invalid_json_schema",
    path: "/inputSchema/properties/n/type",
    line: 6,
  },
  {
    name: "invalid output JSON Schema",
    yaml: "id: x\noutputSchema:\n  required: yes\nstates:\n" + ok,
    code: "invalid_json_schema",
    path: "/outputSchema/required",
    line: 3,
  },
  {
    name: "misspelt JSON Schema keyword",
    yaml:
      "id: x\ninputSchema:\n  type: object\n  properties:\n    n:\n      type: integer\n      minimun: 1\nstates:\n" +
      ok,
    code: "invalid_json_schema",
    path: "/inputSchema/properties/n/minimun",
    line: 7,
    hint: "`minimum`",
  },
  {
    name: "== in a switch condition",
    yaml:
      "id: x\nstates:\n  - id: a\n    type: switch\n    conditions:\n      - if: 'severity == \"high\"'\n        next: done\n" +
      ok,
    code: "invalid_expression",
    path: "/states/0/conditions/0/if",
    line: 6,
    hint: "not `==`",
  },
  {
    name: "&& in a condition",
    yaml:
      "id: x\nstates:\n  - id: a\n    type: switch\n    conditions:\n      - if: 'a && b'\n        next: done\n" +
      ok,
    code: "invalid_expression",
    path: "/states/0/conditions/0/if",
    line: 6,
    hint: "`and`",
  },
  {
    name: "|| in a condition",
    yaml:
      "id: x\nstates:\n  - id: a\n    type: switch\n    conditions:\n      - if: 'a || b'\n        next: done\n" +
      ok,
    code: "invalid_expression",
    path: "/states/0/conditions/0/if",
    line: 6,
    hint: "`or`",
  },
  {
    name: "bad transform expression",
    yaml: "id: x\nstates:\n  - id: a\n    type: transform\n    expression: '{\"a\": (1 + }'\n",
    code: "invalid_expression",
    path: "/states/0/expression",
    line: 5,
  },
  {
    name: "bad dataPath",
    yaml:
      "id: x\nstates:\n  - id: a\n    type: switch\n    dataPath: 'a..'\n    conditions:\n      - if: 'true'\n        next: done\n" +
      ok,
    code: "invalid_expression",
    path: "/states/0/dataPath",
    line: 5,
  },
  {
    name: "bad itemsPath",
    yaml:
      "id: x\nstates:\n  - id: a\n    type: foreach\n    itemsPath: 'items[['\n    iterator:\n      states:\n        - id: i\n          type: inject\n          data: {}\n",
    code: "invalid_expression",
    path: "/states/0/itemsPath",
    line: 5,
  },
  {
    name: "bad output mapping expression",
    yaml: "id: x\nstates:\n  - id: a\n    type: inject\n    data: {}\n    output:\n      sev: '$.result.('\n",
    code: "invalid_expression",
    path: "/states/0/output/sev",
    line: 7,
  },
  {
    name: "bad template in inject data",
    yaml: "id: x\nstates:\n  - id: a\n    type: set\n    data:\n      msg: 'hello ${name == 1}'\n",
    code: "invalid_template",
    path: "/states/0/data/msg",
    line: 6,
  },
  {
    name: "unclosed template in agent task",
    yaml: "id: x\nstates:\n  - id: a\n    type: agent\n    agent: helper\n    task: 'look at ${service'\n",
    code: "invalid_template",
    path: "/states/0/task",
    line: 6,
  },
  {
    name: "agent step without agent",
    yaml: "id: x\nstates:\n  - id: a\n    type: agent\n    task: hi\n",
    code: "missing_field",
    path: "/states/0/agent",
    line: 3,
  },
  {
    name: "inject without data",
    yaml: "id: x\nstates:\n  - id: a\n    type: inject\n",
    code: "missing_field",
    path: "/states/0",
    line: 3,
  },
  {
    name: "timer with both duration and until",
    yaml: "id: x\nstates:\n  - id: a\n    type: timer\n    duration: 1m\n    until: '2030-01-01T00:00:00Z'\n",
    code: "conflicting_fields",
    path: "/states/0/until",
    line: 6,
  },
  {
    name: "sandbox without command or script",
    yaml: "id: x\nstates:\n  - id: a\n    type: sandbox\n    image: stn-test/busybox\n",
    code: "missing_field",
    path: "/states/0",
    line: 3,
  },
  {
    name: "sandbox stage entry with unknown key",
    yaml:
      "id: x\nstates:\n  - id: a\n    type: sandbox\n    command: [ls]\n    stage:\n      - file_key: k\n        dest: /w\n",
    code: "unknown_field",
    path: "/states/0/stage/0/dest",
    line: 8,
  },
  {
    name: "switch without conditions",
    yaml: "id: x\nstates:\n  - id: a\n    type: switch\n    defaultNext: done\n" + ok,
    code: "missing_field",
    path: "/states/0/conditions",
    line: 3,
  },
  {
    name: "foreach without iterator",
    yaml: "id: x\nstates:\n  - id: a\n    type: foreach\n    itemsPath: items\n",
    code: "missing_field",
    path: "/states/0/iterator",
    line: 3,
  },
  {
    name: "join mode any",
    yaml:
      "id: x\nstates:\n  - id: p\n    type: parallel\n    join:\n      mode: any\n    branches:\n      - name: one\n        states:\n          - id: s1\n            type: inject\n            data: {}\n",
    code: "invalid_value",
    path: "/states/0/join/mode",
    line: 6,
  },
  {
    name: "duplicate branch name",
    yaml:
      "id: x\nstates:\n  - id: p\n    type: parallel\n    branches:\n      - name: one\n        states:\n          - {id: s1, type: inject, data: {}}\n      - name: one\n        states:\n          - {id: s2, type: inject, data: {}}\n",
    code: "duplicate_id",
    path: "/states/0/branches/1/name",
    line: 9,
  },
  {
    name: "maxConcurrency zero",
    yaml:
      "id: x\nstates:\n  - id: a\n    type: foreach\n    itemsPath: items\n    maxConcurrency: 0\n    iterator:\n      states:\n        - {id: i, type: inject, data: {}}\n",
    code: "invalid_value",
    path: "/states/0/maxConcurrency",
    line: 6,
  },
  {
    name: "next and end together",
    yaml: "id: x\nstates:\n  - id: a\n    type: inject\n    data: {}\n    next: done\n    end: true\n" + ok,
    code: "conflicting_transition",
    path: "/states/0/end",
    line: 7,
  },
  {
    name: "transition and next together",
    yaml:
      "id: x\nstates:\n  - id: a\n    type: inject\n    data: {}\n    next: done\n    transition: done\n" +
      ok,
    code: "conflicting_alias",
    path: "/states/0/transition",
    line: 7,
  },
  {
    name: "invalid agent reference",
    yaml: "id: x\nstates:\n  - id: a\n    type: agent\n    agent: 'two words'\n",
    code: "invalid_agent",
    path: "/states/0/agent",
    line: 5,
  },
  {
    name: "until is not a date",
    yaml: "id: x\nstates:\n  - id: a\n    type: timer\n    until: tomorrow\n",
    code: "invalid_value",
    path: "/states/0/until",
    line: 5,
  },
  {
    name: "rate_limit period is not a duration",
    yaml: "id: x\nrate_limit: {limit: 5, period: soon}\nstates:\n" + ok,
    code: "invalid_duration",
    path: "/rate_limit/period",
    line: 2,
  },
  {
    name: "debounce without a period",
    yaml: "id: x\ndebounce: {key: '${input.repo}'}\nstates:\n" + ok,
    code: "missing_field",
    path: "/debounce/period",
    line: 2,
  },
];

Deno.test(`validator: ${CASES.length} invalid definitions, each with its code, path and line`, () => {
  assert(CASES.length >= 40, `only ${CASES.length} cases`);
  const failures: string[] = [];
  for (const c of CASES) {
    const r = validateSource(c.yaml);
    const e = r.errors[0];
    const problem = r.valid
      ? "was accepted"
      : e.code !== c.code
      ? `code ${e.code} (${e.message}) != ${c.code}`
      : e.path !== c.path
      ? `path ${e.path} != ${c.path}`
      : c.line !== undefined && e.line !== c.line
      ? `line ${e.line} != ${c.line}`
      : c.hint && !e.hint?.includes(c.hint)
      ? `hint ${JSON.stringify(e.hint)} lacks ${c.hint}`
      : r.definition
      ? "returned a definition"
      : undefined;
    if (problem) failures.push(`${c.name}: ${problem}\n    all: ${JSON.stringify(r.errors)}`);
  }
  assertEquals(failures, []);
});

Deno.test("validator warns of a debounce without triggers (it acts on event starts only)", () => {
  const yaml = (extra: string) => `id: x\ndebounce: {period: 1m}\n${extra}states:\n` + ok;
  assertEquals(validateSource(yaml("")).warnings.map((w) => [w.code, w.path]), [[
    "debounce_without_triggers",
    "/debounce",
  ]]);
  assertEquals(validateSource(yaml("triggers: [{event: push}]\n")).warnings, []);
});

Deno.test("validator: every issue has a message and a hint, and JSON sources get positions too", () => {
  const r = validateSource('{"id": "x", "states": [{"id": "a", "type": "inject", "data": {}, "nxt": "b"}]}');
  assertEquals(r.errors.length, 1);
  assertEquals(r.errors[0].code, "unknown_field");
  assertEquals(r.errors[0].path, "/states/0/nxt");
  assertEquals(r.errors[0].line, 1);
  assertEquals(r.errors[0].column, 66);
  assert(r.errors[0].hint?.includes("`next`"));
  for (const c of CASES) {
    for (const e of validateSource(c.yaml).errors) assert(e.message && e.hint, `${c.name}: ${e.code}`);
  }
});

Deno.test("validator warnings: unreachable states, cycles with no way out, agents not checked", () => {
  const r = validateSource(`id: w
states:
  - id: a
    type: agent
    agent: helper
    next: b
  - id: b
    type: inject
    data: {n: 1}
    next: c
  - id: c
    type: transform
    expression: n + 1
    next: b
  - id: orphan
    type: inject
    data: {}
`);
  assert(r.valid, JSON.stringify(r.errors));
  const codes = r.warnings.map((w) => `${w.code} ${w.path}`);
  assertEquals(codes.sort(), [
    "agent_not_checked /states/0/agent",
    // Without `task` the run input's task/userInput is used, else the empty task: worth a warning.
    "agent_task_missing /states/0",
    "cycle_without_exit /states/1",
    "unreachable_state /states/3",
  ]);
  assertEquals(r.warnings.find((w) => w.code === "unreachable_state")!.line, 15);

  const loopWithExit = validateSource(`id: w
states:
  - id: poll
    type: timer
    duration: 10s
    next: check
  - id: check
    type: switch
    conditions:
      - if: ready = true
        next: done
    defaultNext: poll
  - id: done
    type: inject
    data: {}
`);
  assert(loopWithExit.valid);
  assertEquals(loopWithExit.warnings, []);
});

Deno.test("validator: the id comes from the file name when absent; API bodies validate without text", () => {
  const r = validateSource("states:\n" + ok, { fileName: "/x/deploy-api.workflow.yaml" });
  assert(r.valid, JSON.stringify(r.errors));
  assertEquals(r.definition!.id, "deploy-api");
  const body = validateDefinition({
    workflowId: "from-api",
    name: "N",
    definition: { states: [{ id: "a", type: "inject", data: {} }] },
  });
  assert(body.valid, JSON.stringify(body.errors));
  assertEquals(body.definition!.id, "from-api");
  assertEquals(body.definition!.name, "N");
  assertEquals(body.errors, []);
});

Deno.test("validator: value issues point at the value, expression issues at the bad token", () => {
  const r = validateSource(`id: x
states:
  - id: a
    type: transform
    expression: 'x == 1'
    next: nowhere
`);
  const at = Object.fromEntries(r.errors.map((e) => [e.code, [e.line, e.column]]));
  assertEquals(at.invalid_expression, [5, 21]); // the second `=`
  assertEquals(at.unknown_target, [6, 11]);
});
