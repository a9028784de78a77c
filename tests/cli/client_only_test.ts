import { assertEquals } from "../helpers/assert.ts";

// A command that talks to a server must start without loading the runtime: everything main.ts imports
// statically is loaded by every command, so the engine, the API, the ledger, Docker, NATS, Ajv and
// JSONata may only be reached through a dynamic import() (docs/benchmarks.md, client commands).

interface GraphModule {
  specifier: string;
  kind?: string;
  npmPackage?: string;
  dependencies?: { code?: { specifier: string }; isDynamic?: boolean }[];
}

/** Every module main.ts loads before it runs: its static imports, followed transitively. */
async function staticGraph(): Promise<string[]> {
  const main = new URL("../../main.ts", import.meta.url).href;
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
      if (d.code && !d.isDynamic) stack.push(d.code.specifier);
    }
  }
  return loaded;
}

Deno.test("client commands: main.ts loads no runtime, engine, API, ledger, Docker, NATS or validator statically", async () => {
  const loaded = await staticGraph();
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
