import { assert } from "./helpers/assert.ts";
import { fileURLToPath } from "node:url";
import { tempHome } from "./helpers/home.ts";
import { runStn } from "./helpers/stn.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const README = Deno.readTextFileSync(new URL("../README.md", import.meta.url));

Deno.test("README: names the run and test commands that exist", () => {
  for (const cmd of ["scripts/stn", "scripts/test"]) {
    assert(README.includes(cmd), `README should name ${cmd}`);
    assert(Deno.statSync(new URL(`../${cmd}`, import.meta.url)).isFile);
  }
});

/** Splits a shell line into words, honouring single quotes (enough for the README's commands). */
function shellWords(line: string): string[] {
  return [...line.matchAll(/'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2]);
}

Deno.test("README: the main-job command in 'Two commands' runs and succeeds on a fresh home", async () => {
  const section = README.slice(README.indexOf("## Two commands"));
  const line = section.split("\n").find((l) => l.startsWith("scripts/stn "));
  assert(line, "the Two commands section shows a scripts/stn command");
  const home = await tempHome();
  try {
    // scripts/stn is setup + `deno run -A main.ts`; runStn runs the same main.ts.
    const r = await runStn(shellWords(line).slice(1), { env: home.env, cwd: ROOT });
    assert(r.code === 0, `'${line}' exited ${r.code}: ${r.stderr}`);
    assert(r.stdout.trim().length > 0, "it prints the run's result");
  } finally {
    await home.cleanup();
  }
});
