import { type Document, isMap, isScalar, isSeq, type Node, Pair, Scalar, type YAMLMap } from "yaml";
import { convertPath } from "./expressions.ts";

/**
 * The shape of a Station file in stn's terms, edited in place on the YAML document so comments stay:
 * the API body `{workflowId, definition}` unwrapped, Station's spellings renamed to stn's, fields
 * Station ignored dropped, and Station's defaults that differ from stn's made explicit.
 */

/** Reports a change (`note`) or a construct that cannot be converted (`error`) at a node. */
export type Report = (
  severity: "error" | "note",
  node: Node | null | undefined,
  path: string,
  message: string,
) => void;

/** The pair of `key` in a map. */
export function pairOf(map: YAMLMap, key: string): Pair<Scalar, Node> | undefined {
  return map.items.find((p) => isScalar(p.key) && String(p.key.value) === key) as
    | Pair<Scalar, Node>
    | undefined;
}

/** A scalar's string value, if it is one. */
export function str(node: unknown): string | undefined {
  return isScalar(node) && typeof node.value === "string" ? node.value : undefined;
}

/** Renames a key in place (value and comments kept); false when `to` is already there. */
function renameKey(map: YAMLMap, from: string, to: string): boolean {
  const pair = pairOf(map, from);
  if (!pair || pairOf(map, to)) return false;
  pair.key = new Scalar(to);
  return true;
}

/** Unwraps Station's API body `{workflowId, name, description, definition}` into the definition. */
export function unwrapBody(doc: Document, report: Report): boolean {
  const root = doc.contents;
  if (!isMap(root) || pairOf(root, "states")) return false;
  const def = pairOf(root, "definition")?.value;
  if (!isMap(def)) return false;
  const lifted: Pair[] = [];
  for (const [from, to] of [["workflowId", "id"], ["name", "name"], ["description", "description"]]) {
    const v = pairOf(root, from)?.value;
    if (v && !pairOf(def, to)) lifted.push(new Pair(new Scalar(to), v));
  }
  def.items.unshift(...lifted);
  def.commentBefore = root.commentBefore ?? def.commentBefore;
  doc.contents = def;
  report("note", root, "/definition", "unwrapped Station's API body: the file is now the definition");
  return true;
}

const TYPE_RENAMES: Record<string, string> = { set: "inject", sleep: "timer", delay: "timer" };

/** Fields Station parsed but never used (so dropping them changes nothing), with what to use instead. */
const IGNORED: Record<string, string> = {
  inputPath: "Station ignored `inputPath`; a transform sees the whole context",
  outputPath: "Station ignored `outputPath`; use `resultPath`",
  outputAggregation: "Station ignored `outputAggregation`",
  timeoutSeconds: "Station ignored `timeoutSeconds`; stn approvals take `timeout` (default 1h)",
};

/**
 * Per-state renames and defaults: `transition` → `next`, `set`/`sleep`/`delay` → stn's type names,
 * an inject without `resultPath` gets Station's default `ctx`, an approval's `summary_path` goes into
 * its message, fields Station ignored are dropped. Returns how many changes it made.
 */
export function reshapeState(state: YAMLMap, path: string, report: Report): number {
  let n = 0;
  if (renameKey(state, "transition", "next")) n++;
  const typeNode = pairOf(state, "type")?.value;
  const type = str(typeNode);
  if (type && type in TYPE_RENAMES && isScalar(typeNode)) {
    typeNode.value = TYPE_RENAMES[type];
    n++;
  }
  for (const [key, why] of Object.entries(IGNORED)) {
    const pair = pairOf(state, key);
    if (!pair) continue;
    state.items.splice(state.items.indexOf(pair), 1);
    report("note", pair.key, `${path}/${key}`, `dropped \`${key}\`: ${why}`);
    n++;
  }
  const effective = type ? TYPE_RENAMES[type] ?? type : undefined;
  if (effective === "inject" && !pairOf(state, "resultPath")) {
    state.add(new Pair(new Scalar("resultPath"), new Scalar("ctx")));
    report(
      "note",
      typeNode,
      `${path}/resultPath`,
      "added `resultPath: ctx`: Station's inject wrote there by default, stn writes at the step id",
    );
    n++;
  }
  n += summaryPath(state, path, report);
  return n;
}

/** An approval's `input.summary_path` (stored, shown by Station's UI) → a template in the message. */
function summaryPath(state: YAMLMap, path: string, report: Report): number {
  const input = pairOf(state, "input")?.value;
  const holder = isMap(input) && pairOf(input, "summary_path")
    ? input
    : pairOf(state, "summary_path")
    ? state
    : undefined;
  if (!holder) return 0;
  const pair = pairOf(holder, "summary_path")!;
  const at = holder === state ? `${path}/summary_path` : `${path}/input/summary_path`;
  const summary = str(pair.value);
  const messageOwner = [state, isMap(input) ? input : undefined].find((m) => m && pairOf(m, "message"));
  const message = messageOwner ? pairOf(messageOwner, "message")!.value : undefined;
  if (summary === undefined || !isScalar(message) || typeof message.value !== "string") {
    report(
      "error",
      pair.key,
      at,
      "`summary_path` needs a `message` string to go into; stn shows approvers the message only",
    );
    return 0;
  }
  message.value = `${message.value}\n\n\${${convertPath(summary)}}`;
  holder.items.splice(holder.items.indexOf(pair), 1);
  if (isMap(input) && input.items.length === 0) {
    state.items.splice(state.items.indexOf(pairOf(state, "input")!), 1);
  }
  report(
    "note",
    pair.key,
    at,
    "moved `summary_path` into the approval message as a template: stn shows approvers the message",
  );
  return 1;
}

/** Nested state lists of a state: branches, iterator, try/catch/finally, with their pointers. */
export function nestedStates(state: YAMLMap, path: string): Array<{ seq: Node; path: string }> {
  const out: Array<{ seq: Node; path: string }> = [];
  const branches = pairOf(state, "branches")?.value;
  if (isSeq(branches)) {
    branches.items.forEach((b, i) => {
      const states = isMap(b) ? pairOf(b, "states")?.value : undefined;
      if (states) out.push({ seq: states, path: `${path}/branches/${i}/states` });
    });
  }
  for (const key of ["iterator", "try", "catch", "finally"]) {
    const block = pairOf(state, key)?.value;
    const states = isMap(block) ? pairOf(block, "states")?.value : undefined;
    if (states) out.push({ seq: states, path: `${path}/${key}/states` });
  }
  return out;
}

/**
 * Station ran the states of a branch or iterator one after another in list order, ignoring their
 * transitions, until the last one or one with `end: true`; stn follows `next` inside a block. Each
 * state gets the `next` that reproduces Station's order. Returns how many it set.
 */
export function chainBlock(seq: Node, path: string, report: Report): number {
  if (!isSeq(seq)) return 0;
  const states = seq.items.filter(isMap);
  let n = 0;
  for (const [i, st] of states.entries()) {
    const at = `${path}/${i}`;
    const end = pairOf(st, "end")?.value;
    if (str(pairOf(st, "type")?.value) === "switch") {
      report(
        "error",
        st,
        at,
        "Station ignored a switch's routing inside a branch or iterator (the next state in the list ran); route after the block instead",
      );
      continue;
    }
    if (isScalar(end) && end.value === true) break;
    const nextId = str(pairOf(states[i + 1] ?? st, "id")?.value) ??
      str(pairOf(states[i + 1] ?? st, "name")?.value);
    const transition = pairOf(st, "next") ?? pairOf(st, "transition");
    if (i === states.length - 1) {
      if (transition) {
        st.items.splice(st.items.indexOf(transition), 1);
        report(
          "note",
          transition.value as Node,
          at,
          "dropped the last state's transition: Station ended the block there",
        );
        n++;
      }
      break;
    }
    if (nextId === undefined) continue;
    if (transition && str(transition.value) === nextId) continue;
    if (transition) {
      report(
        "note",
        transition.value as Node,
        at,
        `Station ignored this transition inside a block and ran \`${nextId}\` next; so does the converted file`,
      );
      transition.value = new Scalar(nextId);
    } else st.add(new Pair(new Scalar("next"), new Scalar(nextId)));
    n++;
  }
  if (states.length > 1 && /\/(branches\/\d+|iterator)\/states$/.test(path)) {
    report(
      "note",
      seq,
      path,
      "Station merged the outputs of all states of this block; stn's block output is its last state's output",
    );
  }
  return n;
}
