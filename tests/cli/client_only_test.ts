import { assertEquals } from "../helpers/assert.ts";

// A command that talks to a server must start without loading the runtime: `deno run` loads everything
// main.ts imports, statically or through a literal import("./x.ts"), before any command runs, so the
// engine, the API, the ledger, Docker, NATS, Ajv and JSONata may only be reached through lazyImport
// (src/lib/lazy_import.ts), whose `typeof import` is a type-only edge (docs/benchmarks.md, client commands).

interface GraphModule {
  specifier: string;
  kind?: string;
  npmPackage?: string;
  dependencies?: { code?: { specifier: string } }[];
}

/** Every module `deno run` loads for `entry` before it runs: its code imports, static and dynamic, transitively. */
async function loadedGraph(entry: string): Promise<string[]> {
  const main = new URL(entry, import.meta.url).href;
  const { stdout, code } = await new Deno.Command(Deno.execPath(), { args: ["info", "--json", main] })
    .output();
  assertEquals(code, 0);
  const info = JSON.parse(new TextDecoder().decode(stdout)) as {
    modules: GraphModule[];
    redirects: Record<string, string>;
  };
  const bySpecifier = new Map(info.modules.map((m) => [m.specifier, m]));
  const seen = new Set<string>();
  const loaded: string[] = [];
  const stack = [main];
  while (stack.length) {
    const popped = stack.pop()!;
    const s = info.redirects[popped] ?? popped;
    if (seen.has(s)) continue;
    seen.add(s);
    const m = bySpecifier.get(s);
    if (!m) continue;
    loaded.push(m.kind === "npm" ? `npm:${m.npmPackage}` : m.specifier);
    for (const d of m.dependencies ?? []) {
      if (d.code) stack.push(d.code.specifier);
    }
  }
  return loaded;
}

Deno.test("client commands: the CLI loads no runtime, engine, API, ledger, Docker, NATS or validator at start", async () => {
  const loaded = await loadedGraph("../../src/stn.ts");
  const heavy = [
    // Nothing of runtime/ loads for a client command (it finds a running server through config/server_file.ts).
    /\/src\/(runtime\/(?!server_file\.ts)|api\/|db\/|workflows\/engine\/|sandbox\/docker\.ts|nats\/connection)/,
    /^npm:(dockerode|@nats-io\/|ajv|jsonata|@hono\/|ai@|@ai-sdk\/|dotprompt|@modelcontextprotocol|tar-stream|croner)/,
  ];
  assertEquals(loaded.filter((s) => heavy.some((re) => re.test(s))), []);
  // The walk itself is sound: the client and commander are reached.
  assertEquals(loaded.some((s) => s.endsWith("/src/client/http.ts")), true);
  assertEquals(loaded.some((s) => s.startsWith("npm:commander@")), true);
});

Deno.test("client commands: `stn --version` loads only the version (the CLI is imported when a command needs it)", async () => {
  const loaded = (await loadedGraph("../../main.ts")).map((s) =>
    s.replace(/^.*\/(main\.ts|src\/|deno\.json)/, "$1")
  );
  assertEquals(
    loaded.sort(),
    ["deno.json", "lazy_import.ts", "main.ts", "version.ts"].map((f) =>
      f === "lazy_import.ts" ? "src/lib/lazy_import.ts" : f === "version.ts" ? "src/version.ts" : f
    ).sort(),
  );
});
