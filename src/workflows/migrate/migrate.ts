import { isMap, isScalar, isSeq, LineCounter, type Node, Scalar, type YAMLMap } from "yaml";
import { parseYaml, yamlData } from "../../lib/yaml.ts";
import { validateSource } from "../definition/load.ts";
import { parseCheck } from "../expr.ts";
import {
  convertCondition,
  convertPath,
  mergedDataPath,
  type NameScope,
  NeedsMerge,
  unmergedDataPath,
} from "./expressions.ts";
import { convertTransform } from "./statements.ts";
import type { MigrationIssue, MigrationResult } from "./report.ts";
import { chainBlock, nestedStates, pairOf, type Report, reshapeState, str, unwrapBody } from "./shape.ts";
import { NotStarlark, Unconvertible } from "./starlark.ts";
import { preservedText, snapshot } from "./preserve.ts";
import { convertStationFields, stateIds } from "./station_fields.ts";
import { convertTemplates, convertVariableRef } from "./templates.ts";
import { errorMessage } from "../../errors.ts";

/**
 * `stn workflow migrate` for one file: Station's definition (docs/migrating-from-station.md)
 * → stn's (docs/design/workflows-dsl.md), edited on the YAML document so comments survive. Every
 * construct it cannot convert is left as written, marked with a comment and reported; the result is
 * validated, and what the validator still finds is reported too.
 */

/** Fields whose strings are names, targets or expressions — never `{{ }}` text. */
const NOT_TEXT = new Set(
  ("id name type next transition start end defaultNext onReject onTimeout expression dataPath itemsPath " +
    "itemName resultPath conditions output agent states branches iterator try catch finally retry timeout " +
    "cron timezone").split(" "),
);

/** Types Station accepted but ran as a no-op (or skipped); stn has no such step. */
const NO_OP: Record<string, string> = {
  try_catch:
    "Station ran `try_catch` as a no-op; stn's is `type: try` with `try`/`catch`/`finally` blocks (each `{states: [...]}`)",
  await: "Station completed `await` at once ({skipped: true}); remove the state (stn has no such no-op)",
  "await.signal": "Station completed `await.signal` at once ({skipped: true}); remove the state",
  "await.event": "Station completed `await.event` at once ({skipped: true}); remove the state",
  while: "Station completed `while` at once ({skipped: true}); there is no loop state in stn",
  context: "Station completed `context` at once ({skipped: true}); remove the state",
};

class Migration {
  readonly issues: MigrationIssue[] = [];
  converted = 0;
  readonly #lines: LineCounter;
  #moved = new Map<string, string>();
  /** Every state id in the file, so a state migrate adds gets one of its own. */
  ids = new Set<string>();

  constructor(lines: LineCounter) {
    this.#lines = lines;
  }

  /** `/definition` when the file was Station's API body: reported paths point into the file as written. */
  prefix = "";

  report: Report = (severity, node, path, message) => {
    const offset = node?.range?.[0];
    const pos = offset !== undefined ? this.#lines.linePos(offset) : undefined;
    const at = this.prefix && !path.startsWith(this.prefix) ? this.prefix + path : path;
    this.issues.push({ severity, path: at, message, ...(pos ? { line: pos.line, column: pos.col } : {}) });
  };

  /** Marks a construct left as written. */
  cannot(node: Node | null | undefined, path: string, why: string): void {
    this.report("error", node, path, why);
    if (node && isScalar(node)) node.comment = ` stn migrate: not converted (${why.replaceAll("\n", " ")})`;
  }

  scope(mode: NameScope["mode"]): NameScope {
    return { mode, moved: this.#moved };
  }

  /** The ids whose output stn keeps only at their resultPath (Station also wrote it at the top-level id). */
  learn(def: Record<string, unknown>): void {
    for (const s of Array.isArray(def.states) ? def.states : []) {
      if (!s || typeof s !== "object") continue;
      const st = s as Record<string, unknown>;
      const id = st.id ?? st.name;
      const at = typeof st.resultPath === "string"
        ? st.resultPath.replace(/^\$\.?/, "")
        : ["inject", "set"].includes(st.type as string)
        ? "ctx"
        : undefined;
      if (typeof id === "string" && at !== undefined && at !== id) this.#moved.set(id, `steps.${id}.output`);
    }
  }

  states(seq: Node | null | undefined, path: string): void {
    if (!isSeq(seq)) return;
    seq.items.forEach((s, i) => {
      if (isMap(s)) this.state(s, `${path}/${i}`);
    });
  }

  state(s: YAMLMap, path: string): void {
    this.converted += convertStationFields(s, path, { report: this.report, ids: this.ids });
    this.converted += reshapeState(s, path, this.report);
    const type = str(pairOf(s, "type")?.value);
    if (type && type in NO_OP) this.cannot(pairOf(s, "type")!.value, `${path}/type`, NO_OP[type]);
    for (const key of ["dataPath", "itemsPath"]) this.dataPath(s, key);
    if (type === "switch") this.conditions(s, path);
    if (type === "transform") this.transform(s, path);
    this.retry(s, path);
    for (const p of s.items) {
      const key = isScalar(p.key) ? String(p.key.value) : "";
      // A schedule's input is data, never rendered: a `{{ }}` there stays as written.
      if (NOT_TEXT.has(key) || (type === "cron" && key === "input")) continue;
      this.text(p.value as Node, `${path}/${key}`);
    }
    for (const n of nestedStates(s, path)) {
      this.states(n.seq, n.path);
      this.converted += chainBlock(n.seq, n.path, this.report);
    }
  }

  dataPath(s: YAMLMap, key: string): void {
    const node = pairOf(s, key)?.value;
    const v = str(node);
    if (v === undefined || !isScalar(node)) return;
    const next = convertPath(v);
    if (next !== v) {
      node.value = next;
      this.converted++;
    }
  }

  conditions(s: YAMLMap, path: string): void {
    const list = pairOf(s, "conditions")?.value;
    if (!isSeq(list)) return;
    const dataPath = pairOf(s, "dataPath")?.value;
    const valuePath = str(dataPath);
    let scope = this.scope(valuePath === undefined ? "condition" : "data");
    const ifs = list.items.map((c, i) => ({
      node: isMap(c) ? pairOf(c, "if")?.value : undefined,
      at: `${path}/conditions/${i}/if`,
    }));
    // `$` is the whole context: its keys are the names already. Names besides _value/val/result with
    // any other dataPath: evaluate over the context merged with the value, as Station did.
    const merged = valuePath === undefined ? undefined : unmergedDataPath(valuePath);
    if (valuePath === "$") scope = { ...scope, valuePath };
    else if (merged !== undefined) scope = { ...scope, valuePath: merged };
    else if (
      valuePath !== undefined && isScalar(dataPath) && this.needsMerge(ifs.map((c) => c.node), scope)
    ) {
      dataPath.value = mergedDataPath(valuePath);
      scope = { ...scope, valuePath };
    }
    for (const c of ifs) this.expression(c.node, c.at, (src) => convertCondition(src, scope));
  }

  needsMerge(nodes: unknown[], scope: NameScope): boolean {
    for (const n of nodes) {
      if (!isScalar(n) || typeof n.value !== "string") continue;
      try {
        convertCondition(n.value, scope);
      } catch (err) {
        if (err instanceof NeedsMerge) return true;
      }
    }
    return false;
  }

  transform(s: YAMLMap, path: string): void {
    const node = pairOf(s, "expression")?.value;
    this.expression(node, `${path}/expression`, (src) => convertTransform(src, this.scope("transform")));
  }

  expression(node: unknown, path: string, convert: (src: string) => string): void {
    if (!isScalar(node)) return;
    const src = node.value;
    if (typeof src === "boolean") {
      node.value = String(src);
      return;
    }
    if (typeof src !== "string") return;
    try {
      const out = convert(src);
      if (out === src) return;
      node.value = out;
      node.type = out.includes("\n") ? Scalar.BLOCK_LITERAL : Scalar.PLAIN;
      this.converted++;
    } catch (err) {
      if (!(err instanceof Unconvertible)) throw err;
      // Not Starlark but already JSONata (a file written for stn, or migrated before): nothing to do.
      if (err instanceof NotStarlark && parseCheck(src) === null) return;
      this.cannot(node, path, `cannot convert ${JSON.stringify(src.trim())}: ${err.message}`);
    }
  }

  retry(s: YAMLMap, path: string): void {
    const retry = pairOf(s, "retry")?.value;
    const on = isMap(retry) ? pairOf(retry, "retry_on") : undefined;
    if (!isMap(retry) || !on) return;
    retry.items.splice(retry.items.indexOf(on), 1);
    this.report(
      "note",
      on.key as Node,
      `${path}/retry/retry_on`,
      "dropped `retry_on` (Station never retried): stn retries every failure up to max_attempts; list codes not to retry in `non_retryable`",
    );
    this.converted++;
  }

  /** `{{ }}` templates and `$.path` variable references in any string below a node. */
  text(node: Node | null | undefined, path: string): void {
    if (isMap(node)) {
      for (const p of node.items) {
        const key = isScalar(p.key) ? String(p.key.value) : "";
        const sub = `${path}/${key}`;
        const v = str(p.value);
        const ref = path.endsWith("/input/variables") && v !== undefined ? convertVariableRef(v) : null;
        if (ref && isScalar(p.value)) {
          p.value.value = ref;
          this.converted++;
        } else this.text(p.value as Node, sub);
      }
    } else if (isSeq(node)) {
      node.items.forEach((x, i) => this.text(x as Node, `${path}/${i}`));
    } else if (isScalar(node) && typeof node.value === "string") {
      const r = convertTemplates(node.value, this.scope("condition"));
      if (!r) return;
      if ("error" in r) return this.cannot(node, path, r.error);
      node.value = r.text;
      this.converted++;
    }
  }
}

/** Migrates one file's text; `file` names it in the report (and gives the id when it has none). */
export function migrateText(
  text: string,
  file: string,
  format: "yaml" | "json" = /\.json$/i.test(file) ? "json" : "yaml",
): MigrationResult {
  const lines = new LineCounter();
  const doc = parseYaml(text, { lineCounter: lines, keepSourceTokens: false });
  const refused = (message: string, pos?: { line: number; col: number }): MigrationResult => ({
    file,
    text,
    changed: false,
    converted: 0,
    issues: [{ severity: "error", path: "/", message, ...(pos ? { line: pos.line, column: pos.col } : {}) }],
  });
  if (doc.errors.length > 0) {
    const e = doc.errors[0];
    return refused(`not valid YAML/JSON: ${e.message.split("\n")[0]}`, e.linePos?.[0]);
  }
  // The file's data, within the bounds of src/lib/yaml.ts (aliases expanded).
  const data = (): { value: unknown } | { error: string } => {
    try {
      return { value: yamlData(doc) };
    } catch (err) {
      return { error: errorMessage(err).split("\n")[0] };
    }
  };
  const before = data();
  if ("error" in before) return refused(before.error);
  const snap = snapshot(doc);
  const m = new Migration(lines);
  if (unwrapBody(doc, m.report)) {
    m.converted++;
    m.prefix = "/definition";
  }
  const root = doc.contents;
  if (isMap(root)) {
    m.learn(before.value as Record<string, unknown>);
    m.ids = stateIds(before.value);
    m.states(pairOf(root, "states")?.value, "/states");
  }
  const after = format === "json" ? data() : undefined;
  if (after && "error" in after) return refused(after.error);
  const out = after ? JSON.stringify(after.value, null, 2) + "\n" : preservedText(doc, text, snap);
  const checked = validateSource(out, { fileName: file });
  const reported = new Set(m.issues.filter((i) => i.severity === "error").map((i) => i.path));
  for (const e of checked.errors) {
    if (reported.has(e.path)) continue;
    m.issues.push({
      severity: "error",
      in: "output",
      path: e.path,
      line: e.line,
      column: e.column,
      message: `${e.code}: ${e.message}${e.hint ? ` (hint: ${e.hint})` : ""}`,
    });
  }
  return { file, text: out, changed: out !== text, converted: m.converted, issues: m.issues };
}
