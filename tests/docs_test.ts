import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { assert, assertEquals } from "./helpers/assert.ts";
import { configReferenceRows } from "../src/config/reference.ts";
import { mcpToolRows } from "../scripts/docs.ts";
import { STN_RUN_ARGS } from "../src/build/stn_flags.ts";
import { importGraphText } from "../scripts/import_graph.ts";
import { childEnv, MAIN } from "./helpers/stn.ts";
import { tempHome } from "./helpers/home.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const PAGES = [
  "README.md",
  ...[...Deno.readDirSync(join(ROOT, "docs"))].filter((e) => e.name.endsWith(".md")).map((e) =>
    `docs/${e.name}`
  )
    .sort(),
];
const read = (page: string) => Deno.readTextFileSync(join(ROOT, page));

/** A fenced code block: its info string's words and its text. */
interface Block {
  lang: string;
  flags: string[];
  code: string;
}

function blocks(markdown: string): Block[] {
  return [...markdown.matchAll(/^```(\S*)([^\n]*)\n([\s\S]*?)^```\s*$/gm)].map((m) => ({
    lang: m[1],
    flags: m[2].trim().split(/\s+/).filter(Boolean),
    code: m[3],
  }));
}

/** The rows of the Markdown table between two markers, as trimmed cells. */
function tableRows(markdown: string, start: string, end: string): string[][] {
  const table = markdown.slice(markdown.indexOf(start), markdown.indexOf(end));
  return table.split("\n").filter((l) => l.startsWith("|")).slice(2)
    .map((l) => l.slice(1, -1).split(/(?<!\\)\|/).map((c) => c.trim()));
}

Deno.test("docs: the configuration table is the one generated from the config schema (deno task docs)", () => {
  const rows = tableRows(
    read("docs/configuration.md"),
    "<!-- config-table:start -->",
    "<!-- config-table:end -->",
  );
  assertEquals(rows, configReferenceRows().map((r) => [r.key, r.env, r.default, r.meaning]));
});

Deno.test("docs: the MCP tool table is the one generated from the tool definitions (deno task docs)", () => {
  const rows = tableRows(read("docs/mcp.md"), "<!-- mcp-tools:start -->", "<!-- mcp-tools:end -->");
  assertEquals(rows, mcpToolRows());
});

Deno.test("docs: the import graph in architecture.md is the one of src/ (deno task docs)", () => {
  const page = read("docs/architecture.md");
  const from = page.indexOf("<!-- import-graph:start -->") + "<!-- import-graph:start -->".length;
  assertEquals(page.slice(from, page.indexOf("<!-- import-graph:end -->")).trim(), importGraphText());
});

Deno.test("docs: every page is linked from the README and every relative link resolves", () => {
  const readme = read("README.md");
  for (const page of PAGES.filter((p) => p.startsWith("docs/"))) {
    assert(readme.includes(`](${page})`), `README.md does not link ${page}`);
  }
  for (const page of PAGES) {
    for (const [, target] of read(page).matchAll(/\]\(([^)#\s]+)(#[^)]*)?\)/g)) {
      if (/^[a-z]+:/.test(target)) continue;
      const path = join(ROOT, page.includes("/") ? "docs" : "", target);
      assert(Deno.statSync(path), `${page} links ${target}, which does not exist`);
    }
  }
});

/** A command's output as a page shows it: the `# ` lines after the command, and the command's number. */
interface Shown {
  command: string;
  text: string;
}

/**
 * The page's script, with every command that is followed by shown JSON output (comment lines starting
 * `# {` or `# [`, up to the next line that is not a comment) teeing its stdout to `.shown/<n>`; and what
 * the page shows for each. Text output (shown with `…` for what varies) is not compared.
 */
export function withShownOutputs(script: string): { script: string; shown: Shown[] } {
  const lines = script.split("\n");
  const shown: Shown[] = [];
  let command: number[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (/^# [{[]/.test(line) && command.length) {
      const text: string[] = [];
      for (; i < lines.length && /^#( |$)/.test(lines[i]); i++) text.push(lines[i].replace(/^# ?/, ""));
      i--;
      shown.push({ command: command.map((n) => lines[n]).join("\n"), text: text.join("\n") });
      const last = command.at(-1)!;
      lines[last] = `${lines[last]} | tee .shown/${shown.length - 1}`;
      command = [];
    } else if (line.trim() === "" || line.startsWith("#")) {
      command = [];
    } else {
      command = lines[i - 1]?.endsWith("\\") && command.length ? [...command, i] : [i];
    }
  }
  return { script: "mkdir -p .shown\n" + lines.join("\n"), shown };
}

/**
 * Runs a page's `sh` blocks in order as one bash script, as a reader would type them: in a scratch
 * folder that has the checkout's examples/ and scripts/, on a fresh STATION_HOME, with `stn` on the PATH.
 * Blocks marked `sh norun` are ones that cannot run inside the suite: the test command itself, and commands
 * that change the machine (installing into /usr/local/bin, systemd units), which tests/e2e/cron_test.ts
 * runs against scratch directories instead, or that name the reader's own files (the migrate examples,
 * which tests/workflows/migrate/docs_test.ts runs from the page's before/after blocks).
 */
async function runPage(page: string): Promise<void> {
  const code = blocks(read(page)).filter((b) => b.lang === "sh" && !b.flags.includes("norun"))
    .map((b) => b.code).join("\n");
  if (!code) return;
  const { script, shown } = withShownOutputs(code);
  const home = await tempHome();
  const work = await Deno.makeTempDir({ prefix: "stn-docs-" });
  try {
    const bin = join(work, ".bin");
    Deno.mkdirSync(bin);
    const args = [...STN_RUN_ARGS, MAIN].map((a) => `'${a}'`).join(" ");
    Deno.writeTextFileSync(join(bin, "stn"), `#!/bin/sh\nexec '${Deno.execPath()}' ${args} "$@"\n`, {
      mode: 0o755,
    });
    for (const dir of ["examples", "scripts"]) Deno.symlinkSync(join(ROOT, dir), join(work, dir));
    // Background jobs a page starts (stn serve) end with the script, however it ends.
    const prelude =
      "set -eo pipefail\ntrap 'kill $(jobs -p) 2>/dev/null || true; wait || true' EXIT\ntrap 'exit 143' TERM\n";
    const env = childEnv({ ...home.env, PATH: `${bin}:${Deno.env.get("PATH")}`, STN_SERVER_PORT: "0" });
    const out = await new Deno.Command("timeout", {
      args: ["300", "bash", "-c", prelude + script],
      cwd: work,
      env,
      clearEnv: true,
      stdin: "null",
    }).output();
    const text = (b: Uint8Array) => new TextDecoder().decode(b);
    assert(
      out.code === 0,
      `${page}: its commands exited ${out.code}\n${text(out.stdout)}\n${text(out.stderr)}`,
    );
    // What the page shows a command printing is what it printed.
    shown.forEach((s, n) => {
      const printed = Deno.readTextFileSync(join(work, ".shown", String(n))).trimEnd();
      assertEquals(printed, s.text, `${page}: the output shown for\n${s.command}`);
    });
  } finally {
    await Deno.remove(work, { recursive: true }).catch(() => {});
    await home.cleanup();
  }
}

Deno.test("docs: shown JSON output is found after its command (a continued one too) and teed for comparing", () => {
  const { script, shown } = withShownOutputs(
    'stn a \\\n  --b\n# {\n#   "x": 1\n# }\nstn c   # a note\n# not output\nstn d\n# [1]\n',
  );
  assertEquals(shown, [
    { command: "stn a \\\n  --b", text: '{\n  "x": 1\n}' },
    { command: "stn d", text: "[1]" },
  ]);
  assertEquals(script.split("\n").filter((l) => l.includes("tee")), [
    "  --b | tee .shown/0",
    "stn d | tee .shown/1",
  ]);
  const readme = blocks(read("README.md")).filter((b) => b.lang === "sh").map((b) => b.code).join("\n");
  assert(withShownOutputs(readme).shown.length > 0, "the README shows a command's output");
});

for (const page of PAGES) {
  if (!blocks(read(page)).some((b) => b.lang === "sh" && !b.flags.includes("norun"))) continue;
  Deno.test(`docs: the commands in ${page} run`, () => runPage(page));
}
