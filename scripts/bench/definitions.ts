/**
 * Workflow definition benchmark (no station needed):
 *   (a) JSONata: a switch condition through evaluate() (compiled once, cached, bounded) against the
 *       floor of compiling it for every evaluation with the bare jsonata package;
 *   (b) the validator: validateSource() on every example file against the floor of only parsing them
 *       with the yaml package (rounds after the first reuse the cache of JSON Schemas already checked,
 *       as a re-sync of unchanged files does).
 * Prints each measurement and its ratio to the floor measured in the same run.
 *
 *   deno run -A scripts/bench/definitions.ts [evaluations=20000] [rounds=200]
 */
import jsonata from "jsonata";
import { parseDocument } from "yaml";
import { evaluate } from "../../src/workflows/expr.ts";
import { validateSource } from "../../src/workflows/definition/load.ts";

const EVALS = Number(Deno.args[0] ?? 20000);
const ROUNDS = Number(Deno.args[1] ?? 200);

const ctx = {
  severity: "high",
  count: 7,
  items: [{ n: 1 }, { n: 5 }, { n: 9 }],
  workflow: { input: { env: "prod" } },
};
const condition = '(severity = "high" or count > 10) and $count(items[n > 4]) >= 2 and $input.env = "prod"';

async function time(n: number, fn: () => Promise<unknown> | unknown): Promise<number> {
  const t = performance.now();
  for (let i = 0; i < n; i++) await fn();
  return performance.now() - t;
}

const bindings = { ctx, input: ctx.workflow.input };
await time(500, () => evaluate(condition, ctx, bindings)); // warm-up
await time(500, () => jsonata(condition).evaluate(ctx, bindings));
const floorEval = await time(EVALS, () => jsonata(condition).evaluate(ctx, bindings));
const ours = await time(EVALS, () => evaluate(condition, ctx, bindings));
console.log(`(a) condition, ${EVALS} evaluations`);
console.log(`    compile every time (floor): ${(floorEval / EVALS * 1000).toFixed(1)} µs each`);
console.log(
  `    evaluate() cached+bounded:  ${(ours / EVALS * 1000).toFixed(1)} µs each — ${
    (ours / floorEval).toFixed(2)
  }× the floor`,
);

const dir = new URL("../../examples/workflows/", import.meta.url);
const files = [...Deno.readDirSync(dir)].filter((e) => /\.workflow\.(ya?ml|json)$/.test(e.name))
  .map((e) => ({ name: e.name, text: Deno.readTextFileSync(new URL(e.name, dir)) }));
const parseOnly = await time(ROUNDS, () => files.forEach((f) => parseDocument(f.text).toJS()));
const validate = await time(ROUNDS, () => files.forEach((f) => validateSource(f.text, { fileName: f.name })));
const per = (t: number) => (t / (ROUNDS * files.length) * 1000).toFixed(0);
console.log(`(b) ${files.length} example files × ${ROUNDS} rounds`);
console.log(`    yaml parse only (floor):    ${per(parseOnly)} µs per file`);
console.log(
  `    validateSource():           ${per(validate)} µs per file — ${
    (validate / parseOnly).toFixed(2)
  }× the floor`,
);
