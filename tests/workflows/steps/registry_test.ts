import { z } from "zod";
import { assert, assertEquals, assertThrows } from "../../helpers/assert.ts";
import { startTestStation } from "../../helpers/station.ts";
import { validateSource } from "../../../src/workflows/definition/load.ts";
import { contextScope, renderString } from "../../../src/workflows/expr.ts";
import { common, stateId, templates } from "../../../src/workflows/steps/fields.ts";
import { registerStepType, stepTypeNames } from "../../../src/workflows/steps/registry.ts";
import type { Block, Executor, SchemaKit, StepType } from "../../../src/workflows/steps/types.ts";
import { attempts, waitRun } from "../helpers.ts";

/**
 * A step type that only this file knows, plugged in through the registry's API: everything stn
 * does with step types (schema, validation messages and positions, transitions in the graph pass,
 * execution by the engine) must follow from this one registration.
 */
const schema = () =>
  z.strictObject({
    ...common,
    type: z.literal("shout"),
    text: z.string().check(templates),
    times: z.int().min(1).max(5).default(1),
    /** Where to go when the text renders empty. */
    onEmpty: stateId().optional(),
  });
type ShoutState = z.infer<ReturnType<typeof schema>>;

const execute: Executor<ShoutState> = async (step, scope) => {
  const text = String(await renderString(step.text, contextScope(scope)));
  if (text === "") return { kind: "completed", output: { shouted: "" }, next: step.onEmpty ?? null };
  return { kind: "completed", output: { shouted: text.toUpperCase().repeat(step.times) } };
};

const shout: StepType<ShoutState> = { type: "shout", schema, targets: [["onEmpty"]], executor: execute };
registerStepType(shout);

/** A step type with nested blocks in fields of its own: the engine finds them through `blocks`. */
const pairSchema = (kit: SchemaKit) =>
  z.strictObject({ ...common, type: z.literal("pair"), left: kit.block, right: kit.block });
type PairState = { id: string; type: "pair"; left: Block; right: Block };
const pair: StepType<PairState> = {
  type: "pair",
  schema: pairSchema,
  blocks: [["left"], ["right"]],
  executor: (step) =>
    Promise.resolve({
      kind: "fanout",
      join: "parallel",
      maxConcurrency: 2,
      blocks: [{ key: "left", block: step.left, vars: { side: "L" } }, {
        key: "right",
        block: step.right,
        vars: { side: "R" },
      }],
    }),
};
registerStepType(pair);

Deno.test("a registered step type is one more type, and a name is registered once", () => {
  assert(stepTypeNames().includes("shout"));
  assertThrows(() => registerStepType(shout), Error, "already registered");
});

Deno.test("a registered step type is validated: its schema's errors come with codes, paths, lines and hints", () => {
  const bad = validateSource(`id: loud
states:
  - id: a
    type: shout
    text: hi
    tmes: 2
  - id: b
    type: shout
    text: hi
    times: 9
  - id: c
    type: shout
    text: 'hi \${name'
    onEmpty: nowhere
  - id: d
    type: shout
  - id: e
    type: foreach
    itemsPath: items
    iterator:
      states:
        - id: inner
          type: shout
          text: hi
          volume: 11
  - id: f
    type: shuot
    text: hi
`);
  assert(!bad.valid);
  const got = bad.errors.map((e) => [e.code, e.path, e.line]);
  assertEquals(got, [
    ["unknown_field", "/states/0/tmes", 6],
    ["invalid_value", "/states/1/times", 10],
    ["invalid_template", "/states/2/text", 13],
    ["missing_field", "/states/3/text", 15],
    ["unknown_field", "/states/4/iterator/states/0/volume", 25],
    ["unknown_type", "/states/5/type", 27],
    ["unknown_target", "/states/2/onEmpty", 14],
  ]);
  const hint = (path: string) => bad.errors.find((e) => e.path === path)!.hint;
  assertEquals(hint("/states/0/tmes"), "did you mean `times`?");
  assertEquals(hint("/states/5/type"), "did you mean `shout`?");
  assertEquals(
    bad.errors.find((e) => e.path === "/states/0/tmes")!.message,
    "unknown field `tmes` in a shout state",
  );
  for (const e of bad.errors) assert(e.message && e.hint && e.column, JSON.stringify(e));

  const good = validateSource(`id: loud
states:
  - id: a
    type: shout
    text: hi
    onEmpty: b
  - id: b
    type: inject
    data: {}
`);
  assert(good.valid, JSON.stringify(good.errors));
  assertEquals(good.warnings, [], "onEmpty is a transition: b is reachable");
  assertEquals(
    good.definition!.states[0],
    { id: "a", type: "shout", text: "hi", onEmpty: "b", times: 1 } as never,
  );
});

Deno.test("a registered step type is executed by the engine in a real run", async () => {
  const t = await startTestStation();
  try {
    const engine = t.station.ctx.engine;
    const r = validateSource(`id: loud
states:
  - id: greet
    type: shout
    text: 'hello \${who}'
    times: 2
    next: empty
  - id: empty
    type: shout
    text: ''
    onEmpty: done
    next: never
  - id: never
    type: inject
    data: {reached: true}
  - id: done
    type: transform
    expression: '{"said": greet.shouted}'
`);
    assert(r.valid, JSON.stringify(r.errors));
    const run = await engine.startRun({ definition: r.definition!, input: { who: "stn" } });
    const ended = await waitRun(engine, run.id);
    assertEquals(ended.status, "completed");
    assertEquals(JSON.parse(ended.result!), { said: "HELLO STNHELLO STN" });
    assertEquals(attempts(engine, run.id).map((a) => [a.path, a.status]), [
      ["greet", "completed"],
      ["empty", "completed"],
      ["done", "completed"],
    ]);
  } finally {
    await t.close();
  }
});

Deno.test("a registered step type with nested blocks runs them as child steps, with no engine change", async () => {
  const t = await startTestStation();
  try {
    const engine = t.station.ctx.engine;
    const r = validateSource(`id: pairs
states:
  - id: both
    type: pair
    left:
      states:
        - id: l
          type: transform
          expression: '"left " & side'
    right:
      states:
        - id: r
          type: transform
          expression: '"right " & side'
`);
    assert(r.valid, JSON.stringify(r.errors));
    const run = await engine.startRun({ definition: r.definition!, input: {} });
    const ended = await waitRun(engine, run.id);
    assertEquals(ended.status, "completed");
    assertEquals(JSON.parse(ended.result!), { left: { result: "left L" }, right: { result: "right R" } });
    assertEquals(attempts(engine, run.id).map((a) => [a.path, a.status]).sort(), [
      ["both", "completed"],
      ["both/left/l", "completed"],
      ["both/right/r", "completed"],
    ]);
  } finally {
    await t.close();
  }
});
