import { assert, assertEquals } from "../../helpers/assert.ts";
import { validateDefinition } from "../../../src/workflows/definition/validate.ts";
import { validateSource } from "../../../src/workflows/definition/load.ts";

/** Each pair: the Go project's spelling and the native form; both must normalise to the same definition. */
const PAIRS: Array<{ name: string; go: string; native: string }> = [
  {
    name: "transition → next, name as id",
    go: `id: w
states:
  - name: first
    type: inject
    data: {a: 1}
    transition: second
  - name: second
    type: transform
    expression: a + 1
`,
    native: `id: w
states:
  - id: first
    type: inject
    data: {a: 1}
    next: second
  - id: second
    type: transform
    expression: a + 1
`,
  },
  {
    name: "operation + input.task agent.run → agent",
    go: `id: w
states:
  - id: analyze
    type: operation
    input:
      task: agent.run
      agent: analyst@prod
      agent_task: Analyze the incident
      variables:
        service: api
`,
    native: `id: w
states:
  - id: analyze
    type: agent
    agent: analyst@prod
    task: Analyze the incident
    input:
      variables:
        service: api
`,
  },
  {
    name: "operation + input.task human.approval → human_approval",
    go: `id: w
states:
  - id: approve
    type: operation
    input:
      task: human.approval
      message: Deploy?
      approvers: [ops]
      timeout_seconds: 600
    transition: go
  - id: go
    type: inject
    data: {ok: true}
`,
    native: `id: w
states:
  - id: approve
    type: human_approval
    message: Deploy?
    approvers: [ops]
    timeout: 600s
    next: go
  - id: go
    type: inject
    data: {ok: true}
`,
  },
  {
    name: "an approval's input.timeoutSeconds (Station's devops examples) → timeout",
    go: `id: w
states:
  - id: approve
    type: operation
    input:
      task: human.approval
      message: Deploy?
      timeoutSeconds: 300
`,
    native: `id: w
states:
  - id: approve
    type: human_approval
    message: Deploy?
    timeout: 300s
`,
  },
  {
    name: "set → inject",
    go: "id: w\nstates:\n  - id: s\n    type: set\n    data: {x: 1}\n",
    native: "id: w\nstates:\n  - id: s\n    type: inject\n    data: {x: 1}\n",
  },
  {
    name: "sleep and delay → timer",
    go:
      "id: w\nstates:\n  - id: s\n    type: sleep\n    duration: 5s\n    next: d\n  - id: d\n    type: delay\n    duration: 1m\n",
    native:
      "id: w\nstates:\n  - id: s\n    type: timer\n    duration: 5s\n    next: d\n  - id: d\n    type: timer\n    duration: 1m\n",
  },
  {
    name: "cron start state → schedule",
    go: `id: w
start: tick
states:
  - id: tick
    type: cron
    cron: "0 9 * * 1-5"
    timezone: Europe/Berlin
    input: {region: eu}
    transition: report
  - id: report
    type: inject
    data: {done: true}
`,
    native: `id: w
start: report
schedule:
  cron: "0 9 * * 1-5"
  timezone: Europe/Berlin
  input: {region: eu}
states:
  - id: report
    type: inject
    data: {done: true}
`,
  },
  {
    name: "aliases inside nested blocks",
    go: `id: w
states:
  - id: fan
    type: parallel
    branches:
      - name: one
        states:
          - name: wait
            type: sleep
            duration: 1s
            transition: put
          - name: put
            type: set
            data: {v: 1}
`,
    native: `id: w
states:
  - id: fan
    type: parallel
    branches:
      - name: one
        states:
          - id: wait
            type: timer
            duration: 1s
            next: put
          - id: put
            type: inject
            data: {v: 1}
`,
  },
  {
    name: "Station field names: agent input.task/agent, approval_title, timeout_seconds, retry backoff",
    go: `id: w
defaults:
  retry: {max_attempts: 2, backoff: exponential}
states:
  - id: analyze
    type: agent
    input:
      agent: analyst
      task: Analyze the incident
    retry: {max_attempts: 3, backoff: 5s}
    transition: approve
  - id: approve
    type: human_approval
    approval_title: Ship it
    message: Deploy?
    timeout_seconds: 600
`,
    native: `id: w
defaults:
  retry: {max_attempts: 2, backoff_coefficient: 2}
states:
  - id: analyze
    type: agent
    agent: analyst
    task: Analyze the incident
    retry: {max_attempts: 3, initial_interval: 5s}
    next: approve
  - id: approve
    type: human_approval
    name: Ship it
    message: Deploy?
    timeout: 600s
`,
  },
];

Deno.test("Go-project forms normalise to the same definition as the native form", () => {
  for (const p of PAIRS) {
    const go = validateSource(p.go);
    const native = validateSource(p.native);
    assert(go.valid, `${p.name} (go): ${JSON.stringify(go.errors)}`);
    assert(native.valid, `${p.name} (native): ${JSON.stringify(native.errors)}`);
    assertEquals(go.definition, native.definition, p.name);
  }
});

Deno.test("the Go API body form {workflowId, name, definition} loads like the file form", () => {
  const body = validateDefinition({
    workflowId: "w",
    name: "W",
    definition: { states: [{ name: "s", type: "set", data: { x: 1 } }] },
  });
  const file = validateSource("id: w\nname: W\nstates:\n  - id: s\n    type: inject\n    data: {x: 1}\n");
  assert(body.valid, JSON.stringify(body.errors));
  assertEquals(body.definition, file.definition);
});

Deno.test("issues in aliased fields point at what the user wrote, after a removed cron state too", () => {
  const r = validateSource(`id: w
states:
  - id: tick
    type: cron
    cron: "*/5 * * * *"
    transition: a
  - id: a
    type: set
    data: {}
    transition: nowhere
`);
  assertEquals(r.errors.map((e) => [e.code, e.path, e.line]), [[
    "unknown_target",
    "/states/1/transition",
    10,
  ]]);
});

Deno.test("defaults from the schema are applied in the normalised form", () => {
  const r = validateSource(`id: w
states:
  - id: each
    type: foreach
    itemsPath: items
    retry: {max_attempts: 3}
    iterator:
      states:
        - {id: one, type: transform, expression: item}
`);
  assert(r.valid, JSON.stringify(r.errors));
  const s = r.definition!.states[0] as {
    itemName: string;
    maxConcurrency: number;
    retry: Record<string, unknown>;
  };
  assertEquals(s.itemName, "item");
  assertEquals(s.maxConcurrency, 1);
  assertEquals(s.retry, {
    max_attempts: 3,
    initial_interval: "1s",
    backoff_coefficient: 2,
    max_interval: "1m",
    non_retryable: [],
  });
});

Deno.test("a state with both id and name keeps name as its label", () => {
  const r = validateSource("id: w\nstates:\n  - id: a\n    name: First step\n    type: set\n    data: {}\n");
  assert(r.valid, JSON.stringify(r.errors));
  assertEquals(r.definition!.states[0].id, "a");
  assertEquals(r.definition!.states[0].name, "First step");
});

Deno.test("a cron start state shifts no issue: no spurious missing_type, messages name source paths", () => {
  const r = validateSource(`id: w
start: tick
states:
  - id: tick
    type: cron
    cron: "0 6 * * *"
    transition: a
  - id: a
    type: set
    data: {x: 1}
    transition: b
  - id: b
    type: operation
    input:
      task: custom.run
    transition: a
  - id: a
    type: inject
    data: {}
`);
  assertEquals(r.errors.map((e) => [e.code, e.path, e.line]), [
    ["unknown_type", "/states/2/input/task", 15],
    ["duplicate_id", "/states/3/id", 17],
  ]);
  assertEquals(r.errors[1].message, "state id `a` is already used at /states/1");
});

Deno.test("the API body shape keeps positions: issues point under /definition at their real line", () => {
  const json = `{
  "workflowId": "w",
  "definition": {
    "states": [
      {"id": "a", "type": "set", "data": {"x": 1}, "transition": "nowhere"}
    ]
  }
}`;
  const yaml = `workflowId: w
name: W
definition:
  states:
    - id: a
      type: set
      data: {x: 1}
      transition: nowhere
`;
  assertEquals(validateSource(json).errors.map((e) => [e.code, e.path, e.line, e.column]), [
    ["unknown_target", "/definition/states/0/transition", 5, 66],
  ]);
  assertEquals(validateSource(yaml).errors.map((e) => [e.code, e.path, e.line, e.column]), [
    ["unknown_target", "/definition/states/0/transition", 8, 19],
  ]);
  const badId = validateSource(
    `{"workflowId": "Bad Id",\n "definition": {"states": [{"id": "a", "type": "set", "data": {}}]}}`,
  );
  assertEquals(badId.errors.map((e) => [e.code, e.path, e.line]), [["invalid_id", "/workflowId", 1]]);
});

Deno.test("Station fields stn does not support are errors whose hint names the stn equivalent", () => {
  const r = validateSource(`id: w
states:
  - id: approve
    type: human_approval
    message: Deploy?
    input:
      summary_path: steps.summary
    retry:
      retry_on: [timeout]
      backoff: linear
`);
  assertEquals(r.errors.map((e) => [e.code, e.path, e.line]), [
    ["unsupported_field", "/states/0/input/summary_path", 7],
    ["unsupported_field", "/states/0/retry/backoff", 10],
    ["unsupported_field", "/states/0/retry/retry_on", 9],
  ]);
  assert(r.errors[0].hint!.includes("message"));
  assert(r.errors[1].hint!.includes("initial_interval"));
  assert(r.errors[2].hint!.includes("non_retryable"));
});

Deno.test("silent differences from Station are warnings: literal {{ }} and unenforced approvers", () => {
  const r = validateSource(`id: w
states:
  - id: note
    type: inject
    data:
      text: "Severity {{ ctx.severity }}"
    next: approve
  - id: approve
    type: human_approval
    message: Deploy?
    approvers: [ops]
`);
  assert(r.valid, JSON.stringify(r.errors));
  assertEquals(r.warnings.map((w) => [w.code, w.path, w.line]), [
    ["literal_braces", "/states/0/data/text", 6],
    ["approvers_not_enforced", "/states/1/approvers", 11],
  ]);
  assert(r.warnings[0].hint!.includes("${"));
});
