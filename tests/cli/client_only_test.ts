import { assertEquals } from "../helpers/assert.ts";

// A command that talks to a server must start without loading the runtime: `deno run` loads everything
// main.ts imports, statically or through a literal import("./x.ts"), before any command runs, so the
// engine, the API, the ledger, Docker, NATS, Ajv and JSONata may only be reached through lazyImport
// (src/lib/lazy_import.ts), whose `typeof import` is a type-only edge (docs/benchmarks.md, client commands).
// Each command group's modules are imported when it runs (src/cli/commands.ts).

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

/** Every module `deno run` loads for these entries, together. */
async function loadedGraphs(entries: string[]): Promise<string[]> {
  return [...new Set((await Promise.all(entries.map(loadedGraph))).flat())];
}

/** The modules src/cli/commands.ts imports when their command group runs. */
function commandGroupModules(): string[] {
  const text = Deno.readTextFileSync(new URL("../../src/cli/commands.ts", import.meta.url));
  return [...text.matchAll(/lazyImport<typeof import\("\.\/([^"]+)"\)>/g)].map((m) =>
    `../../src/cli/${m[1]}`
  );
}

Deno.test("client commands: the CLI loads no runtime, engine, API, ledger, Docker, NATS or validator at start", async () => {
  const modules = commandGroupModules();
  assertEquals(modules.includes("../../src/cli/runs.ts"), true);
  // The entry and every command group, as the whole tree (--help) loads them.
  const loaded = await loadedGraphs(["../../src/stn.ts", ...modules]);
  const heavy = [
    // Nothing of runtime/ loads for a client command (it finds a running server through config/server_file.ts).
    /\/src\/(runtime\/(?!server_file\.ts)|api\/|db\/|workflows\/engine\/|sandbox\/docker\.ts|nats\/connection)/,
    /^npm:(dockerode|@nats-io\/|ajv|jsonata|@hono\/|ai@|@ai-sdk\/|dotprompt|@modelcontextprotocol|tar-stream|croner)/,
  ];
  assertEquals(loaded.filter((s) => heavy.some((re) => re.test(s))), []);
  // The walk itself is sound: the client is reached.
  assertEquals(loaded.some((s) => s.endsWith("/src/client/http.ts")), true);
});

Deno.test("client commands: `stn workflow runs` and `stn files list` load node:sqlite and no package, not even zod", async () => {
  // What each loads: the entry and its command group (src/cli/commands.ts). Commander (node:events,
  // node:child_process), yaml and @opentelemetry/api (CommonJS), ulid (node:crypto), node:fs, node:path
  // (src/lib/path.ts stands in) and node:async_hooks each cost a client command 5-25 ms of start, and zod
  // with the contracts' and the config's schemas ~25 ms: answers are checked by code generated from the
  // contracts (src/client/answers/), the config read through src/config/client_settings.ts
  // (docs/benchmarks.md, startup); node:sqlite (the ledger owner check) loads in ~1 ms.
  const groups = {
    "workflow runs": ["workflow.ts", "run.ts", "runs.ts", "reruns.ts", "events.ts"],
    "files list": ["files.ts"],
  };
  for (const [command, files] of Object.entries(groups)) {
    const loaded = await loadedGraphs(["../../src/stn.ts", ...files.map((f) => `../../src/cli/${f}`)]);
    const outside = loaded.filter((s) => /^(npm|node):/.test(s));
    assertEquals(
      outside.filter((s) => s !== "node:sqlite"),
      [],
      `stn ${command} loads these`,
    );
  }
});

Deno.test("client commands: the `workflow` group loads the definitions', agent runs' and events' answer checks only in the commands that use them", async () => {
  // Each module of answer checks is tens of kB of generated code (src/client/answers/): `workflow
  // list|show|apply…`, `workflow inspect` and `workflow signal` import theirs when they run. No contract
  // module with schemas loads at all (headers.ts holds names only): the client reads them as types.
  const group = ["workflow.ts", "run.ts", "runs.ts", "reruns.ts", "events.ts"].map((f) =>
    `../../src/cli/${f}`
  );
  const loaded = await loadedGraphs(["../../src/stn.ts", ...group]);
  assertEquals(
    loaded.filter((s) =>
      /\/src\/(contract\/(?!headers\.ts)\w+|client\/answers\/(workflows|sync|agents|agent_runs|events)|cli\/agent_runs)\.ts$/
        .test(s)
    ),
    [],
  );
  // The walk reaches the runs' answer checks, which `workflow runs` needs.
  assertEquals(loaded.some((s) => s.endsWith("/src/client/answers/runs.ts")), true);
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
