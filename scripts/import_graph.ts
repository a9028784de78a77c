/**
 * The "who imports whom" list of docs/architecture.md, from the import statements of `src/`: each
 * folder with the folders its files import. `deno task docs` writes it; tests/docs_test.ts checks it, and
 * tests/architecture_test.ts checks the file graph underneath for cycles and forbidden edges.
 */
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const SRC = fileURLToPath(new URL("../src", import.meta.url));
/** Folders whose subfolders are layers of their own (workflows/engine is not workflows). */
const SPLIT = new Set(["agents", "mcp", "workflows"]);

function* sourceFiles(dir: string): Generator<string> {
  for (const entry of Deno.readDirSync(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) yield* sourceFiles(path);
    else if (/\.tsx?$/.test(entry.name)) yield path;
  }
}

/**
 * The layer a file belongs to: its folder in src/ (two levels under agents/, mcp/, workflows/), its name at
 * the top of src/, or its path when it is outside src/ (deno.json, scripts/).
 */
function layer(file: string): string {
  const rel = relative(SRC, file);
  if (rel.startsWith("..")) return relative(dirname(SRC), file); // outside src/: the file itself
  const parts = rel.split("/");
  if (parts.length === 1) return parts[0].replace(/\.tsx?$/, "");
  return SPLIT.has(parts[0]) && parts.length > 2 ? `${parts[0]}/${parts[1]}` : parts[0];
}

/**
 * Each file of src/ (src-relative) with the files it imports: static imports, re-exports and dynamic
 * `import()` of relative paths; a file outside src/ shows as a path starting with `../`.
 */
export function fileGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(SRC)) {
    const text = Deno.readTextFileSync(file);
    const targets = [...text.matchAll(/(?:from|import)\s*\(?\s*"(\.{1,2}\/[^"]+)"/g)]
      .map((m) => relative(SRC, resolve(dirname(file), m[1])));
    graph.set(relative(SRC, file), [...new Set(targets)]);
  }
  return graph;
}

/** Each layer of src/ with the other layers it imports, sorted. */
export function importGraph(): Map<string, string[]> {
  const edges = new Map<string, Set<string>>();
  for (const [file, targets] of fileGraph()) {
    const from = layer(join(SRC, file));
    const set = edges.get(from) ?? edges.set(from, new Set()).get(from)!;
    for (const target of targets) {
      const to = layer(join(SRC, target));
      if (to !== from) set.add(to);
    }
  }
  return new Map(
    [...edges].filter(([, s]) => s.size > 0).sort(([a], [b]) => a.localeCompare(b))
      .map(([k, s]) => [k, [...s].sort()]),
  );
}

/** The graph as the fenced lines of docs/architecture.md. */
export function importGraphText(): string {
  const graph = importGraph();
  const width = Math.max(...[...graph.keys()].map((k) => k.length)) + 1;
  return "```\n" + [...graph].map(([k, v]) => `${k.padEnd(width)}→ ${v.join(", ")}`).join("\n") + "\n```";
}
