import { assertEquals, assertThrows } from "../../helpers/assert.ts";
import { evaluate, evaluateCondition } from "../../../src/workflows/expr.ts";
import {
  convertCondition,
  convertValue,
  mergedDataPath,
  type NameScope,
  NeedsMerge,
} from "../../../src/workflows/migrate/expressions.ts";
import { convertTransform } from "../../../src/workflows/migrate/statements.ts";
import { Unconvertible } from "../../../src/workflows/migrate/starlark.ts";

const CTX = {
  alert: { severity: "high", service: "api", tags: ["db", "prod"] },
  services: [{ name: "api", status: "ok", ms: 120 }, { name: "db", status: "down", ms: 900 }, {
    name: "web",
    status: "ok",
    ms: 80,
  }],
  count: 3,
  label: "checkout",
  empty: [],
  nothing: null,
  analyze: { response: "x", result: { risk: 0.9 } },
  steps: { analyze: { output: { response: "x", result: { risk: 0.9 } } } },
  env: "prod",
};
const scope = (mode: NameScope["mode"], moved: [string, string][] = []): NameScope => ({
  mode,
  moved: new Map(moved),
});

/** Each Starlark condition, with what Station (Python semantics) evaluates it to over CTX. */
const CONDITIONS: Array<[string, boolean]> = [
  ["alert.severity == 'high'", true],
  ["alert['severity'] != 'high'", false],
  ["count >= 3 and label == 'checkout'", true],
  ["count > 5 or not label", false],
  ["'db' in alert.tags", true],
  ["'x' not in alert.tags", true],
  ["'eck' in label", true],
  ["'service' in alert", true],
  ["label in ['checkout', 'cart']", true],
  ["len(services) == 3 and len(label) == 8 and len(alert) == 3", true],
  ["str(count) == '3'", true],
  ["nothing == None and alert != None", true],
  ["hasattr(alert, 'severity') and not hasattr(alert, 'owner')", true],
  ["getattr(alert, 'owner', 'nobody') == 'nobody'", true],
  ["services[0].name == 'api' and services[-1]['name'] == 'web'", true],
  ["label[0] == 'c' and label[-1] == 't' and [1, 2][1] == 2", true],
  ["len([s for s in services if s['status'] != 'ok']) == 1", true],
  ["any([s['ms'] > 500 for s in services])", true],
  ["all([s['ms'] > 500 for s in services])", false],
  ["True", true],
  ["not empty", true],
  ["label.startswith('check') and label.upper() == 'CHECKOUT'", true],
  ["count + 1 == 4 and label + '!' == 'checkout!'", true],
  ["count // 2 == 1 and count % 2 == 1", true],
  ["'high' if count > 1 else 'low'", true],
];

Deno.test("Starlark conditions convert to JSONata that decides the same over the context", async () => {
  for (const [src, want] of CONDITIONS) {
    const js = convertCondition(src, scope("condition"));
    assertEquals(await evaluateCondition(js, { data: CTX, bindings: { ctx: CTX } }), want, `${src} → ${js}`);
  }
});

Deno.test("switch with dataPath: _value/val/result are the value, its keys shadow the context's", async () => {
  // Only the bindings: the value itself is the condition's input.
  assertEquals(
    convertCondition("_value == 'high' or val == 'low'", scope("data")),
    "$ = 'high' or $ = 'low'",
  );
  assertThrows(() => convertCondition("severity == 'high'", scope("data")), NeedsMerge);
  // Other names: the input is the context with the value's keys over it, as Station's variables were.
  const cases: Array<[string, boolean]> = [
    ["_value['severity'] == 'high'", true],
    ["val.service == 'api' and result.severity == 'high'", true],
    ["severity == 'high'", true],
    ["env == 'prod' and len([s for s in services if s['ms'] > 100]) == 2", true], // context keys
  ];
  // dataPath `$` is the whole context: its keys are the names, the bindings the context itself.
  assertEquals(
    convertCondition("_value['label'] == label", { ...scope("data"), valuePath: "$" }),
    "$.label = label",
  );
  const merged = { ...scope("data"), valuePath: "alert" };
  const data = await evaluate(mergedDataPath("alert"), CTX, { ctx: CTX });
  for (const [src, want] of cases) {
    const js = convertCondition(src, merged);
    assertEquals(await evaluateCondition(js, { data, bindings: { ctx: CTX } }), want, `${src} → ${js}`);
  }
});

Deno.test("transforms: values, comprehensions and multi-statement bodies keep Station's results", async () => {
  const cases: Array<[string, unknown]> = [
    ['{"n": len(services), "first": services[0]["name"]}', { n: 3, first: "api" }],
    ["[s['name'] for s in services if s['status'] == 'ok']", ["api", "web"]],
    ["{s['name']: s['ms'] for s in services}", { api: 120, db: 900, web: 80 }],
    ["label or 'none'", "checkout"],
    ["nothing or 'none'", "none"],
    ["sum([s['ms'] for s in services])", 1100],
    ["input['label'] + '-' + ctx['alert']['service']", "checkout-api"],
    ["json.decode('{\"a\": 1}')", { a: 1 }],
    [
      `slow = []
for s in services:
    if s["ms"] > 100:
        slow.append(s["name"])
total = 0
for s in services:
    total += s["ms"]
{"slow": slow, "total": total, "count": len(slow)}`,
      { slow: ["api", "db"], total: 1100, count: 2 },
    ],
    [
      `by = {}
for s in services:
    by[s["name"]] = s["status"]
by`,
      { api: "ok", db: "down", web: "ok" },
    ],
    [
      `if count > 2:
    level = "many"
else:
    level = "few"
result = {"level": level}`,
      { level: "many" },
    ],
    // Python slices: clamped bounds, negative ones from the end, a list of lists stays one.
    ["[s['name'] for s in services][-2:]", ["db", "web"]],
    ["[s['name'] for s in services][-50:]", ["api", "db", "web"]],
    ["services[1:2][0]['name']", "db"],
    ["[[1], [2], [3]][-2:-1]", [[2]]],
    ["label[:5] + label[-3:]", "checkout"],
    ["label[5:2]", ""],
    // A state with a resultPath was also at its top-level id in Station; stn keeps it at steps.<id>.output.
    ["analyze['result']['risk'] > 0.5", true],
  ];
  for (const [src, want] of cases) {
    const js = convertTransform(src, scope("transform", [["analyze", "steps.analyze.output"]]));
    const got = await evaluate(js, { ...CTX, analyze: undefined }, { ctx: { ...CTX, analyze: undefined } });
    assertEquals(got, want, `${src}\n→ ${js}`);
  }
  assertEquals(convertValue("ctx.label", scope("condition")), "ctx.label");
});

Deno.test("constructs without a JSONata equivalent are Unconvertible, with a reason", () => {
  for (
    const src of [
      "lambda x: x",
      "services[::2]",
      "'%s!' % label",
      "a < b < c",
      "sorted(services, key=f)",
      "label.format(x)",
      "x ** 2",
      "[a for a in b for c in a]",
    ]
  ) {
    assertThrows(() => convertCondition(src, scope("condition")), Unconvertible);
  }
  for (
    const src of [
      "while True:\n    x = 1\nx",
      "for s in services:\n    a = 1\n    b = 2\na",
      "def f():\n  return 1\nf()",
    ]
  ) {
    assertThrows(() => convertTransform(src, scope("transform")), Unconvertible);
  }
});
