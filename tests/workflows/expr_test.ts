import { assert, assertEquals, assertRejects, assertThrows } from "../helpers/assert.ts";
import {
  checkTemplates,
  compileExpression,
  contextScope,
  evaluate,
  evaluateCondition,
  parseCheck,
  parseTemplate,
  renderString,
  renderTemplates,
} from "../../src/workflows/expr.ts";
import { StationError } from "../../src/errors.ts";

const ctx = {
  severity: "high",
  count: 3,
  items: [{ name: "a", n: 1 }, { name: "b", n: 2 }, { name: "c", n: 5 }],
  workflow: { input: { service: "api", replicas: 2 }, run_id: "r1", workflow_id: "deploy" },
  steps: { check: { output: { result: { ok: true, severity: "low" } }, status: "completed" } },
};
const scope = contextScope(ctx);

Deno.test("conditions: JSONata truthiness over the context with $ctx and $input", async () => {
  const table: Array<[string, boolean]> = [
    ['severity = "high"', true],
    ['severity != "high"', false],
    ["count > 2 and count < 10", true],
    ["count > 5 or severity = 'high'", true],
    ["$not(count > 2)", false],
    ["steps.check.output.result.ok", true],
    ["$ctx.workflow.input.replicas = 2", true],
    ['$input.service = "api"', true],
    ["missing.field", false],
    ["items[n > 4]", true],
    ["items[n > 10]", false],
    ['"high" in items.name', false],
    ["$count(items) = 3", true],
  ];
  for (const [src, want] of table) {
    assertEquals(await evaluateCondition(src, scope), want, src);
  }
});

Deno.test("transforms: values, objects and sequences come back as plain JSON", async () => {
  const table: Array<[string, unknown]> = [
    ["count * 2", 6],
    ['{"total": $sum(items.n), "names": items.name}', { total: 8, names: ["a", "b", "c"] }],
    ["items[n > 1].name", ["b", "c"]],
    ["items[0]", { name: "a", n: 1 }],
    ['$uppercase($input.service) & "-" & $string(count)', "API-3"],
    ["nothing.here", undefined],
    ["[items.n]", [1, 2, 5]],
    ["$map(items, function($i) { $i.n * 10 })", [10, 20, 50]],
  ];
  for (const [src, want] of table) {
    const got = await evaluate(src, ctx, scope.bindings);
    assertEquals(got, want, src);
    if (Array.isArray(got)) assertEquals(Object.keys(got).length, got.length, `${src}: no sequence flags`);
  }
});

Deno.test("templates: a single template keeps the type, mixed text stringifies, $${ escapes", async () => {
  const table: Array<[string, unknown]> = [
    ["${count}", 3],
    ["${ steps.check.output.result }", { ok: true, severity: "low" }],
    ["${items.name}", ["a", "b", "c"]],
    ["${ count > 1 }", true],
    ["count=${count}", "count=3"],
    ["deploy ${$input.service} x${$input.replicas}", "deploy api x2"],
    ["result: ${steps.check.output.result}", 'result: {"ok":true,"severity":"low"}'],
    ["$${count} stays", "${count} stays"],
    ["$${count}", "${count}"],
    ["a ${missing} b", "a  b"],
    ['${ {"k": count} }', { k: 3 }],
    ['${ "}" & severity }', "}high"],
    ["no template here", "no template here"],
    ["", ""],
  ];
  for (const [src, want] of table) {
    assertEquals(await renderString(src, scope), want, src);
  }
});

Deno.test("renderTemplates goes deep over objects and arrays and leaves other values alone", async () => {
  const got = await renderTemplates({
    service: "${$input.service}",
    tags: ["${severity}", "fixed", 7, null],
    nested: { n: "${count}", msg: "n is ${count}", flag: false },
  }, scope);
  assertEquals(got, {
    service: "api",
    tags: ["high", "fixed", 7, null],
    nested: { n: 3, msg: "n is 3", flag: false },
  });
});

Deno.test("parseCheck: syntax problems carry code, position and a hint for other languages' operators", () => {
  assertEquals(parseCheck('severity = "high"'), null);
  const table: Array<[string, string | undefined]> = [
    ['severity == "high"', "`=`, not `==`"],
    ["a && b", "`and`"],
    ["a || b", "`or`"],
    ["a !== b", "`!=`, not `!==`"],
    ["!a", "$not"],
    ["(a", undefined],
    ["", undefined],
  ];
  for (const [src, hint] of table) {
    const p = parseCheck(src);
    assert(p, `${src} should not parse`);
    assert(typeof p.position === "number" && p.position >= 0 && p.position <= src.length, src);
    if (hint) assert(p.hint?.includes(hint), `${src}: hint ${p.hint}`);
  }
  const eq = parseCheck('severity == "high"')!;
  assertEquals(eq.position, 10); // the second `=`
  // An expression that ends too early is wrong at its end (not five characters before, the length of `(end)`).
  assertEquals([parseCheck("$sum(x")!.position, parseCheck("$sum(items.price")!.position], [6, 16]);
});

Deno.test("compileExpression caches and reports invalid expressions as StationError", () => {
  assert(compileExpression("a + 1") === compileExpression("a + 1"));
  const err = assertThrows(() => compileExpression("a == 1"), StationError) as StationError;
  assertEquals(err.code, "expression_invalid");
  assertEquals((err.details as { expression: string }).expression, "a == 1");
  assert(err.message.includes("position"));
  assert(err.hint?.includes("=="));
});

Deno.test("evaluation errors carry the expression and position", async () => {
  const err = (await assertRejects(() => evaluate('count + "x"', ctx), StationError)) as StationError;
  assertEquals(err.code, "expression_failed");
  const d = err.details as { expression: string; position: number; jsonata: string };
  assertEquals(d.expression, 'count + "x"');
  assertEquals(d.jsonata, "T2002");
  assert(typeof d.position === "number");
});

Deno.test("a runaway expression is stopped by the bound with a clear error", async () => {
  // Tail calls are optimised by JSONata, so this loops forever without growing: the time bound stops it.
  const loop = "($f := function($n) { $f($n + 1) }; $f(0))";
  const forever =
    (await assertRejects(() => evaluate(loop, {}, {}, { timeoutMs: 100 }), StationError)) as StationError;
  assertEquals(forever.code, "expression_timeout");

  const recursion = "($f := function($n) { 1 + $f($n + 1) }; $f(0))";
  const deep = (await assertRejects(() => evaluate(recursion, {}), StationError)) as StationError;
  assertEquals(deep.code, "expression_too_deep");
  assert(deep.hint?.includes("bound"));

  const slow = "$sum($map([1..2000000], function($x) { $x * 2 }))";
  const timeout = (await assertRejects(
    () => evaluate(slow, {}, {}, { timeoutMs: 50, maxSequence: 10_000_000 }),
    StationError,
  )) as StationError;
  assertEquals(timeout.code, "expression_timeout");
  assert(timeout.message.includes("timeout"), timeout.message);

  // $eval runs its argument in the same bounded environment.
  const nested = (await assertRejects(
    () => evaluate('$eval("($f := function($n) { $f($n + 1) }; $f(0))")', {}, {}, { timeoutMs: 100 }),
    StationError,
  )) as StationError;
  assert(/timeout/i.test(nested.message), nested.message);

  const big = (await assertRejects(
    () => evaluate("[1..2000000]", {}, {}, { maxSequence: 1000 }),
    StationError,
  )) as StationError;
  assertEquals(big.code, "expression_too_large");
});

Deno.test("template syntax: unclosed templates and bad expressions are found with their offsets", () => {
  assertEquals(parseTemplate("a ${b} c"), [{ text: "a " }, { expr: "b", offset: 4 }, { text: " c" }]);
  assertEquals(checkTemplates("plain"), []);
  assertEquals(checkTemplates("$${not a template"), []);
  const unclosed = checkTemplates("hello ${name");
  assertEquals(unclosed.length, 1);
  assertEquals(unclosed[0].code, "template_unclosed");
  assertEquals(unclosed[0].position, 6);
  const bad = checkTemplates("x ${a == 1}");
  assertEquals(bad.length, 1);
  assert(bad[0].position >= 4 && bad[0].position < 11, String(bad[0].position));
  assert(bad[0].hint?.includes("=="));
});
