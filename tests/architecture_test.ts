import { fileURLToPath } from "node:url";
import { join, relative } from "node:path";
import { assertEquals } from "./helpers/assert.ts";
import { fileGraph } from "../scripts/import_graph.ts";

const SRC = fileURLToPath(new URL("../src", import.meta.url));

/** The files under dir whose names match kind (TypeScript unless told). */
function sources(dir = SRC, kind = /\.tsx?$/): string[] {
  return [...Deno.readDirSync(dir)].flatMap((e) => {
    const path = join(dir, e.name);
    return e.isDirectory ? sources(path, kind) : kind.test(path) ? [path] : [];
  });
}

const FILES = fileGraph();

/** The strongly connected components of a graph with more than one node: its cycles (Tarjan). */
function cycles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) visit(w), low.set(v, Math.min(low.get(v)!, low.get(w)!));
      else if (stack.includes(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component = stack.splice(stack.indexOf(v));
    if (component.length > 1) found.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

/** A file's folder in src/ (its top-level folder; a file at the top is its own). */
function folder(path: string): string {
  return path.includes("/") ? path.split("/")[0] : path;
}

/** Every import `from → to` whose ends match, as `from → to` lines. */
function edges(from: RegExp, to: (target: string, source: string) => boolean): string[] {
  return [...FILES].filter(([f]) => from.test(f)).flatMap(([f, targets]) =>
    targets.filter((t) => to(t, f)).map((t) => `${f} → ${t}`)
  );
}

Deno.test("architecture: no import cycle between files of src/ (static, re-export and dynamic imports)", () => {
  assertEquals(cycles(FILES), []);
});

Deno.test("architecture: no import cycle between the folders of src/", () => {
  const graph = new Map<string, string[]>();
  for (const [file, targets] of FILES) {
    const from = folder(file);
    graph.set(from, [
      ...new Set([...(graph.get(from) ?? []), ...targets.map(folder).filter((t) => t !== from)]),
    ]);
  }
  assertEquals(cycles(graph), []);
});

Deno.test("architecture: the engine has one door; code outside workflows/engine/ imports only its mod.ts", () => {
  const inside = (f: string) => f.startsWith("workflows/engine/");
  assertEquals(edges(/./, (t, f) => !inside(f) && inside(t) && t !== "workflows/engine/mod.ts"), []);
});

Deno.test("architecture: agents/ does not import the workflow engine or step types (steps depend on AgentRunner)", () => {
  assertEquals(edges(/^agents\//, (t) => /^workflows\/(engine|steps)\//.test(t)), []);
});

Deno.test("architecture: src/ imports nothing from scripts/ (scripts depend on src/, not the other way)", () => {
  assertEquals(edges(/./, (t) => t.startsWith("../scripts/")), []);
});

Deno.test("architecture: the CLI and the client reach a station over HTTP; server types come from contract/", () => {
  // The runtime is handed to the CLI by src/stn.ts; the server's own modules and types stay on its side.
  const server =
    /^(api\/|context\.ts|db\/|events\/|runtime\/|server\/|ui\/|workers\/|workflows\/engine\/|files\/store\.ts|sandbox\/(backend|service)\.ts)/;
  assertEquals(edges(/^(cli|client)\//, (t) => server.test(t)), []);
});

Deno.test("architecture: no file in src/ is over 400 lines (TypeScript and the supervisor's C)", () => {
  const long = sources(SRC, /\.(tsx?|c|h)$/).map((f) =>
    [relative(SRC, f), Deno.readTextFileSync(f).split("\n").length] as const
  )
    .filter(([, n]) => n > 400);
  assertEquals(long, []);
});

Deno.test("architecture: only src/mcp/client/ uses the MCP SDK's client (its .js subpaths type as any)", () => {
  const users = sources().filter((f) =>
    /["']@modelcontextprotocol\/sdk\/client/.test(Deno.readTextFileSync(f))
  )
    .map((f) => relative(SRC, f)).filter((f) => !f.startsWith("mcp/client/"));
  assertEquals(users, []);
});
