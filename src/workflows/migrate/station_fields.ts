/**
 * Station's fields that its runtime ignored or ran as no-ops but whose intent is plain, rewritten to
 * stn's: `prompt`/`agentTask` → an agent's `task` (an approval's `message`), a branch's or a foreach's
 * own `agent` → a nested agent state, `itemVariable` → `itemName`, `try_catch` → `try`, an approval's
 * `timeoutSeconds` → `timeout`, and an `operation` that did nothing → an `inject` of its input. Each
 * change is reported as a note saying what Station did and what stn does now.
 */

import { isMap, isScalar, isSeq, type Node, Pair, Scalar, YAMLMap, YAMLSeq } from "yaml";
import { pairOf, type Report, str } from "./shape.ts";

/** What a rewrite needs besides the state: where to report, and the ids already taken in the file. */
export interface FieldContext {
  report: Report;
  ids: Set<string>;
}

const OPERATION_TYPES = ["operation", "action", "function"];
const AGENT_TASKS = ["agent.run", "agent.hierarchy.run"];

/** Every state id (or Station's `name`) anywhere in a definition's data. */
export function stateIds(data: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(data)) data.forEach((x) => stateIds(x, into));
  else if (data && typeof data === "object") {
    const o = data as Record<string, unknown>;
    if (Array.isArray(o.states)) {
      for (const s of o.states) {
        const id = s && typeof s === "object"
          ? (s as Record<string, unknown>).id ?? (s as Record<string, unknown>).name
          : undefined;
        if (typeof id === "string") into.add(id);
      }
    }
    Object.values(o).forEach((x) => stateIds(x, into));
  }
  return into;
}

/** What a state runs as, Station's `operation` + `input.task` spelling included. */
function kind(s: YAMLMap): "agent" | "approval" | "noop" | "other" {
  const type = str(pairOf(s, "type")?.value);
  if (type === "agent") return "agent";
  if (type === "human_approval") return "approval";
  if (!type || !OPERATION_TYPES.includes(type)) return "other";
  const input = pairOf(s, "input")?.value;
  const task = isMap(input) ? str(pairOf(input, "task")?.value) : undefined;
  if (task && AGENT_TASKS.includes(task)) return "agent";
  return task === "human.approval" ? "approval" : "noop";
}

function remove(map: YAMLMap, pair: Pair): void {
  map.items.splice(map.items.indexOf(pair), 1);
}

function freshId(base: string, ids: Set<string>): string {
  let id = base;
  for (let n = 2; ids.has(id); n++) id = `${base}_${n}`;
  ids.add(id);
  return id;
}

function agentState(id: string, agent: Node, extra: Array<[string, unknown]> = []): YAMLMap {
  const st = new YAMLMap();
  st.add(new Pair(new Scalar("id"), new Scalar(id)));
  st.add(new Pair(new Scalar("type"), new Scalar("agent")));
  st.add(new Pair(new Scalar("agent"), agent));
  for (const [k, v] of extra) st.add(new Pair(new Scalar(k), v));
  return st;
}

function statesOf(state: YAMLMap): YAMLSeq {
  const states = new YAMLSeq();
  states.items.push(state);
  return states;
}

/** Rewrites one state's Station-only fields in place; returns how many changes it made. */
export function convertStationFields(s: YAMLMap, path: string, c: FieldContext): number {
  const k = kind(s);
  let n = 0;
  if (k === "agent" || k === "approval") n += taskField(s, path, k, c);
  if (k === "approval") n += approvalTimeout(s, path, c);
  if (k === "noop") n += noOperation(s, path, c);
  const type = str(pairOf(s, "type")?.value);
  if (type === "try_catch" && isMap(pairOf(s, "try")?.value)) {
    (pairOf(s, "type")!.value as Scalar).value = "try";
    c.report(
      "note",
      pairOf(s, "type")!.value,
      `${path}/type`,
      "`try_catch` → `try`: Station ran `try_catch` as a no-op (neither block ran); stn runs `try`, and `catch` when it fails",
    );
    n++;
  }
  if (type === "parallel") n += branchAgents(s, path, c);
  if (type === "foreach") n += foreachAgent(s, path, c);
  return n;
}

/** `prompt` / `agentTask` → `task` (agent) or `message` (approval). */
function taskField(s: YAMLMap, path: string, k: "agent" | "approval", c: FieldContext): number {
  const to = k === "agent" ? "task" : "message";
  const input = pairOf(s, "input")?.value;
  let n = 0;
  for (const from of k === "agent" ? ["prompt", "agentTask"] : ["prompt"]) {
    const pair = pairOf(s, from);
    if (!pair) continue;
    const taken = pairOf(s, to) ??
      (isMap(input) ? pairOf(input, to === "task" ? "agent_task" : to) : undefined);
    if (taken) {
      c.report(
        "error",
        pair.key,
        `${path}/${from}`,
        `\`${from}\` next to a \`${to}\`: Station ignored \`${from}\`; delete it, or merge its text into \`${to}\``,
      );
      continue;
    }
    const written = pair.key;
    pair.key = new Scalar(to);
    c.report(
      "note",
      written,
      `${path}/${from}`,
      k === "agent"
        ? `\`${from}\` → \`task\`: Station did not read \`${from}\` (its agent got the previous step's \`response\`, or "Execute workflow step: <id>"); stn sends it as the agent's task`
        : "`prompt` → `message`: Station failed an approval without `message`; stn shows approvers this text",
    );
    n++;
  }
  return n;
}

/** An approval's `timeoutSeconds` (in `input` or on the state) → `timeout`. */
function approvalTimeout(s: YAMLMap, path: string, c: FieldContext): number {
  const input = pairOf(s, "input")?.value;
  const holder = isMap(input) && pairOf(input, "timeoutSeconds")
    ? input
    : pairOf(s, "timeoutSeconds")
    ? s
    : undefined;
  if (!holder) return 0;
  const pair = pairOf(holder, "timeoutSeconds")!;
  const at = holder === s ? `${path}/timeoutSeconds` : `${path}/input/timeoutSeconds`;
  const v = isScalar(pair.value) ? pair.value.value : undefined;
  if (typeof v !== "number" || !Number.isInteger(v) || v <= 0) {
    c.report(
      "error",
      pair.value,
      at,
      "`timeoutSeconds` must be a whole number of seconds; write `timeout: 30m`",
    );
    return 0;
  }
  remove(holder, pair);
  if (holder !== s && isMap(input) && input.items.length === 0) remove(s, pairOf(s, "input")!);
  const had = pairOf(s, "timeout") ?? (isMap(input) ? pairOf(input, "timeout_seconds") : undefined);
  if (!had) s.add(new Pair(new Scalar("timeout"), new Scalar(`${v}s`)));
  c.report(
    "note",
    pair.key,
    at,
    had
      ? "dropped `timeoutSeconds`: the approval already has a timeout"
      : `\`timeoutSeconds\` → \`timeout: ${v}s\`: Station read only \`timeout_seconds\` (this approval waited its default 1h); stn enforces the timeout`,
  );
  return 1;
}

/** An `operation` whose task Station did not run (a no-op that output its input) → an `inject` of that input. */
function noOperation(s: YAMLMap, path: string, c: FieldContext): number {
  const typeNode = pairOf(s, "type")!.value as Scalar;
  const input = pairOf(s, "input");
  const task = input && isMap(input.value) ? str(pairOf(input.value, "task")?.value) : undefined;
  if (pairOf(s, "data")) {
    c.report(
      "error",
      typeNode,
      `${path}/type`,
      "Station ran this as a no-op; replace it with the state it should be",
    );
    return 0;
  }
  const agent = [s, input?.value].map((m) => (isMap(m) ? str(pairOf(m, "agent")?.value) : undefined)).find(
    Boolean,
  );
  const op = pairOf(s, "operation");
  if (op) remove(s, op);
  typeNode.value = "inject";
  if (input) input.key = new Scalar("data"); // reported at the type, which keeps its node
  else s.add(new Pair(new Scalar("data"), new YAMLMap()));
  const id = str(pairOf(s, "id")?.value) ?? str(pairOf(s, "name")?.value);
  if (!pairOf(s, "resultPath") && id) s.add(new Pair(new Scalar("resultPath"), new Scalar(id)));
  const rewrite = agent
    ? `to run agent \`${agent}\` as was probably meant, write \`type: agent\`, \`agent: ${agent}\`, \`task: "…"\``
    : "replace it with the state it should be (agent, transform, sandbox…)";
  c.report(
    "note",
    typeNode,
    `${path}/type`,
    `\`${
      task ?? "operation"
    }\` → \`inject\` of its input: Station ran it as a no-op (only \`agent.run\` and \`human.approval\` ran); ${rewrite}`,
  );
  return 1;
}

/** A branch's own `agent` (Station never ran it) → the branch's one agent state. */
function branchAgents(s: YAMLMap, path: string, c: FieldContext): number {
  const branches = pairOf(s, "branches")?.value;
  if (!isSeq(branches)) return 0;
  let n = 0;
  branches.items.forEach((b, i) => {
    const agent = isMap(b) ? pairOf(b, "agent") : undefined;
    if (!isMap(b) || !agent) return;
    const at = `${path}/branches/${i}/agent`;
    if (pairOf(b, "states")) {
      c.report(
        "error",
        agent.key,
        at,
        "a branch's `agent` next to its `states`: Station ignored it; delete it",
      );
      return;
    }
    const name = str(pairOf(b, "name")?.value) ?? `branch_${i}`;
    const id = freshId(name, c.ids);
    b.items[b.items.indexOf(agent)] = new Pair(
      new Scalar("states"),
      statesOf(agentState(id, agent.value as Node)),
    );
    c.report(
      "note",
      agent.key,
      at,
      `a branch's \`agent\` → its agent state \`${id}\` (Station never ran a branch without states); it has no \`task\`: add one, e.g. \`task: "Investigate: \${steps.triage.output}"\``,
    );
    n++;
  });
  return n;
}

/** A foreach's own `agent` and `itemVariable` → `itemName` and an iterator with one agent state. */
function foreachAgent(s: YAMLMap, path: string, c: FieldContext): number {
  let n = 0;
  const variable = pairOf(s, "itemVariable");
  if (variable) {
    if (pairOf(s, "itemName")) {
      remove(s, variable);
      c.report(
        "note",
        variable.key,
        `${path}/itemVariable`,
        "dropped `itemVariable`: the foreach has an `itemName`",
      );
    } else {
      const written = variable.key;
      variable.key = new Scalar("itemName");
      c.report(
        "note",
        written,
        `${path}/itemVariable`,
        "`itemVariable` → `itemName`, the name each iteration sees its item under",
      );
    }
    n++;
  }
  const agent = pairOf(s, "agent");
  if (!agent) return n;
  if (pairOf(s, "iterator")) {
    c.report(
      "error",
      agent.key,
      `${path}/agent`,
      "a foreach's `agent` next to its `iterator`: Station ignored it; delete it",
    );
    return n;
  }
  const item = str(pairOf(s, "itemName")?.value) ?? "item";
  const id = freshId(`${str(pairOf(s, "id")?.value) ?? str(pairOf(s, "name")?.value) ?? "each"}_item`, c.ids);
  const variables = new YAMLMap();
  variables.add(new Pair(new Scalar(item), new Scalar(`\${${item}}`)));
  const input = new YAMLMap();
  input.add(new Pair(new Scalar("variables"), variables));
  const iterator = new YAMLMap();
  iterator.add(
    new Pair(new Scalar("states"), statesOf(agentState(id, agent.value as Node, [["input", input]]))),
  );
  s.items[s.items.indexOf(agent)] = new Pair(new Scalar("iterator"), iterator);
  c.report(
    "note",
    agent.key,
    `${path}/agent`,
    `a foreach's \`agent\` → an iterator running agent state \`${id}\` with the item as its variable \`${item}\` (Station failed a foreach without one: "iterator with states is required"); add a \`task\` saying what to do with it`,
  );
  return n + 1;
}
