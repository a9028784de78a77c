import { fileURLToPath } from "node:url";
import { join, relative } from "node:path";
import ts from "typescript";
import { assertEquals } from "./helpers/assert.ts";

// The typing rules of docs/design/layers.md#types that lint cannot see, kept by a scan.
const ROOT = fileURLToPath(new URL("..", import.meta.url));

/** The TypeScript files of the project's own code (src/, tests/, scripts/, main.ts). */
function sources(dir: string): string[] {
  return [...Deno.readDirSync(dir)].flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory) return e.name === "fixtures" ? [] : sources(path);
    return /\.tsx?$/.test(e.name) ? [path] : [];
  });
}

const FILES = [...["src", "tests", "scripts"].flatMap((d) => sources(join(ROOT, d))), join(ROOT, "main.ts")];
const SELF = fileURLToPath(import.meta.url);

/** `file:line` of every line matching pattern, this file aside (it names the patterns). */
function linesMatching(pattern: RegExp): string[] {
  return FILES.filter((f) => f !== SELF).flatMap((f) =>
    Deno.readTextFileSync(f).split("\n").flatMap((line, i) =>
      pattern.test(line) ? [`${relative(ROOT, f)}:${i + 1}`] : []
    )
  );
}

Deno.test("typing: nothing reads zod's internals (`._zod`); its public API (def, type, shape, instanceof) does", () => {
  assertEquals(linesMatching(/\._zod\b/), []);
});

Deno.test("typing: a caught error's message comes from errorMessage(err), not a cast to Error", () => {
  assertEquals(linesMatching(/\(\s*\w+\s+as\s+Error\s*\)\??\.message/), []);
});

Deno.test("typing: no-explicit-any is on, and each exception says why (`deno-lint-ignore no-explicit-any -- reason`)", () => {
  const lint = JSON.parse(Deno.readTextFileSync(join(ROOT, "deno.json"))).lint;
  assertEquals(JSON.stringify(lint?.rules?.exclude ?? []).includes("no-explicit-any"), false);
  assertEquals(linesMatching(/deno-lint-ignore(-file)? no-explicit-any(?!\s+--\s+\S)/), []);
});

/** Whether node is the handler given to a command's `.action(…)`, whose parameters the CLI parser fixes. */
function commandAction(node: ts.Node): boolean {
  const call = node.parent;
  return ts.isCallExpression(call) && call.arguments.includes(node as ts.Expression) &&
    ts.isPropertyAccessExpression(call.expression) && call.expression.name.text === "action";
}

/** `file:line name (n)` of every function, method, constructor or signature in src/ with more than `max` parameters. */
function longParameterLists(max: number): string[] {
  return FILES.filter((f) => f.startsWith(join(ROOT, "src/"))).flatMap((file) => {
    const kind = file.endsWith(".tsx") ? ts.ScriptKind.TSX : ts.ScriptKind.TS;
    const source = ts.createSourceFile(file, Deno.readTextFileSync(file), ts.ScriptTarget.Latest, true, kind);
    const found: string[] = [];
    const visit = (node: ts.Node) => {
      if (ts.isFunctionLike(node) && !commandAction(node)) {
        // A `this` parameter only types the receiver; callers do not pass it.
        const count = node.parameters.filter((p) => p.name.getText(source) !== "this").length;
        if (count > max) {
          const { line } = source.getLineAndCharacterOfPosition(node.getStart(source));
          const name = node.name?.getText(source) ?? ts.SyntaxKind[node.kind];
          found.push(`${relative(ROOT, file)}:${line + 1} ${name} (${count})`);
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
    return found;
  });
}

Deno.test("typing: no function in src/ takes more than four parameters; the rest go in an options object", () => {
  assertEquals(longParameterLists(4), []);
});
