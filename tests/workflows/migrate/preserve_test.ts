import { type Document, isMap, isSeq, Pair, parseDocument, Scalar, type YAMLMap, type YAMLSeq } from "yaml";
import { preservedText, snapshot } from "../../../src/workflows/migrate/preserve.ts";
import { assertEquals } from "../../helpers/assert.ts";

const SOURCE = `# head comment
states:
  - id: a      # aligned
    type: set
    tags: [quick, thorough]
    transition: b
    expression: |
      x = 1
      x

  - id: b
    data: {k: 1}   # flow
`;

/** Edits a fresh parse of SOURCE and prints it back. */
function edited(edit: (states: YAMLSeq, doc: Document) => void): string {
  const doc = parseDocument(SOURCE);
  const snap = snapshot(doc);
  const states = (doc.contents as YAMLMap).get("states", true) as unknown as YAMLSeq;
  edit(states, doc);
  return preservedText(doc, SOURCE, snap);
}

const first = (s: YAMLSeq) => s.items[0] as YAMLMap;
const pairOf = (m: YAMLMap, k: string) => m.items.find((p) => (p.key as Scalar).value === k)!;

Deno.test("preservedText: no edit gives the source back, byte for byte", () => {
  assertEquals(edited(() => {}), SOURCE);
});

Deno.test("preservedText: a renamed key and a changed scalar change only their own bytes", () => {
  const out = edited((s) => {
    pairOf(first(s), "transition").key = new Scalar("next");
    (pairOf(first(s), "type").value as Scalar).value = "inject";
  });
  assertEquals(out, SOURCE.replace("transition: b", "next: b").replace("type: set", "type: inject"));
});

Deno.test("preservedText: an added entry goes after the last one at its indentation; a removed one takes its lines", () => {
  const out = edited((s) => {
    const a = first(s);
    a.items.splice(a.items.indexOf(pairOf(a, "tags")), 1);
    a.add(new Pair(new Scalar("resultPath"), new Scalar("ctx")));
  });
  assertEquals(
    out,
    SOURCE.replace("    tags: [quick, thorough]\n", "").replace(
      "      x\n\n",
      "      x\n    resultPath: ctx\n\n",
    ),
  );
});

Deno.test("preservedText: the first entry of a list item removed, the next one moves onto its dash", () => {
  const out = edited((s) => {
    const a = first(s);
    a.items.splice(0, 1);
  });
  assertEquals(out, SOURCE.replace("- id: a      # aligned\n    type: set", "- type: set"));
});

Deno.test("preservedText: a block scalar rewritten keeps its place; a flow map edited is written as flow", () => {
  const out = edited((s) => {
    const expr = pairOf(first(s), "expression").value as Scalar;
    expr.value = "(\n  $x := 1;\n  $x\n)";
    const data = pairOf(s.items[1] as YAMLMap, "data").value as YAMLMap;
    data.set("k", 2);
  });
  assertEquals(
    out,
    SOURCE.replace("|\n      x = 1\n      x\n", "|-\n      (\n        $x := 1;\n        $x\n      )\n")
      .replace("data: {k: 1}", "data: {k: 2}"),
  );
});

Deno.test("preservedText: a change it cannot place falls back to the library's layout, data intact", () => {
  const doc = parseDocument(SOURCE);
  const snap = snapshot(doc);
  const states = (doc.contents as YAMLMap).get("states", true) as unknown as YAMLSeq;
  states.items.reverse(); // reordered: not placeable
  const out = preservedText(doc, SOURCE, snap);
  const again = parseDocument(out).toJS();
  assertEquals(again.states.map((st: { id: string }) => st.id), ["b", "a"]);
  assertEquals(isMap(doc.contents) && isSeq(states), true);
});
