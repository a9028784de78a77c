/**
 * Regenerates the parts of docs/ that are derived from code (today: the configuration table from the
 * config schema's defaults and descriptions). `deno task docs`; tests/docs_test.ts fails when they drift.
 */
import { configReferenceTable } from "../src/config/reference.ts";

const START = "<!-- config-table:start -->";
const END = "<!-- config-table:end -->";
const path = new URL("../docs/configuration.md", import.meta.url);

/** The configuration page with its generated table replaced by the current one. */
export function withConfigTable(page: string): string {
  const start = page.indexOf(START);
  const end = page.indexOf(END);
  if (start < 0 || end < start) throw new Error(`docs/configuration.md lacks the ${START} … ${END} markers`);
  return page.slice(0, start + START.length) + "\n\n" + configReferenceTable() + "\n\n" + page.slice(end);
}

if (import.meta.main) {
  Deno.writeTextFileSync(path, withConfigTable(Deno.readTextFileSync(path)));
  console.log("docs: wrote docs/configuration.md");
}
