import { mapAt } from "../steps/paths.ts";
import { stepType } from "../steps/registry.ts";

/**
 * Rewrites the Go project's aliases into the one normalised form
 * (docs/design/workflows-dsl.md#normalised-form): `transition`→`next`, `name`-as-id, `operation`+`input.task:
 * agent.run`→`agent`, `operation`+`input.task: human.approval`→`human_approval`, `set`→`inject`,
 * `sleep`/`delay`→`timer`, `await.signal`/`await.event`/`wait_for_event`→`await`, a `cron` start state →
 * top-level `schedule`, and the Go project's field names where they mean the same (an agent's
 * `input.task`/`input.agent`, an approval's `approval_title`/`timeout_seconds`, retry `backoff`). Its fields
 * stn deliberately does not support (`summary_path`, `retry_on`) are problems whose hint names the stn
 * equivalent. It also remembers where each rewritten value came from, so an issue found in the normalised
 * form points at what the user wrote.
 */
import { parseDuration } from "../../lib/duration.ts";

type Obj = Record<string, unknown>;

/** A problem found while rewriting aliases (reported by the validator as an error). */
export interface AliasProblem {
  code: string;
  /** Pointer in the source document. */
  path: string;
  message: string;
  hint?: string;
}

export interface Normalized {
  value: Obj;
  problems: AliasProblem[];
  /** Maps a pointer in the normalised value to the pointer of what the user wrote. */
  sourcePath(pointer: string): string;
}

const OPERATION_TYPES = new Set(["operation", "action", "function"]);
const TYPE_ALIASES: Record<string, string> = {
  set: "inject",
  sleep: "timer",
  delay: "timer",
  "await.signal": "await",
  "await.event": "await",
  wait_for_event: "await",
};

function isObj(v: unknown): v is Obj {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

class Rewriter {
  readonly problems: AliasProblem[] = [];
  readonly renames = new Map<string, string>();
  /** State index shifts from removing a cron start state; applied before `renames`. */
  readonly shifts = new Map<string, string>();

  /** Records that the normalised pointer `to` holds what the source had at `from`. */
  moved(to: string, from: string): void {
    if (to !== from) this.renames.set(to, from);
  }

  /** The source pointer of a normalised pointer: the longest renamed prefix wins. */
  sourcePath(pointer: string): string {
    return Rewriter.lookup(this.renames, Rewriter.lookup(this.shifts, pointer));
  }

  static lookup(map: Map<string, string>, pointer: string): string {
    let p = pointer;
    while (true) {
      const hit = map.get(p);
      if (hit !== undefined) return hit + pointer.slice(p.length);
      const cut = p.lastIndexOf("/");
      if (cut <= 0) return pointer;
      p = p.slice(0, cut);
    }
  }

  /** Renames `from` to `to` in a state; both present is an error (which one wins would be a guess). */
  rename(s: Obj, { from, to }: { from: string; to: string }, ptr: string, src: string): void {
    if (!(from in s)) return;
    if (to in s) {
      this.problems.push({
        code: "conflicting_alias",
        path: `${src}/${from}`,
        message: `both \`${from}\` and \`${to}\` are set`,
        hint: `\`${from}\` is the Go project's name for \`${to}\`: keep one`,
      });
      delete s[from];
      return;
    }
    s[to] = s[from];
    delete s[from];
    this.moved(`${ptr}/${to}`, `${src}/${from}`);
  }

  state(raw: unknown, ptr: string, src: string): unknown {
    if (!isObj(raw)) return raw;
    const s: Obj = { ...raw };
    if (!("id" in s) && typeof s.name === "string") this.rename(s, { from: "name", to: "id" }, ptr, src);
    this.rename(s, { from: "transition", to: "next" }, ptr, src);
    if (typeof s.type === "string" && s.type in TYPE_ALIASES) s.type = TYPE_ALIASES[s.type];
    if (typeof s.type === "string" && OPERATION_TYPES.has(s.type)) this.operation(s, ptr, src);
    else if (s.type === "agent") this.agentInput(s, ptr, src);
    else if (s.type === "timer" || s.type === "human_approval") this.goInput(s, ptr, src);
    if (s.type === "human_approval") this.approval(s, ptr, src);
    if (isObj(s.retry)) s.retry = this.retry(s.retry, `${ptr}/retry`, `${src}/retry`);
    this.blocks(s, ptr, src);
    return s;
  }

  /** `operation` (or `action`/`function`) with `input.task` naming what it really is. */
  operation(s: Obj, ptr: string, src: string): void {
    const input = isObj(s.input) ? { ...s.input } : {};
    const task = input.task;
    if (task === "agent.run" || task === "agent.hierarchy.run") {
      s.type = "agent";
      this.agentInput(s, ptr, src);
    } else if (task === "human.approval") {
      s.type = "human_approval";
      delete input.task;
      s.input = input;
      this.goInput(s, ptr, src);
    } else {
      this.problems.push({
        code: "unknown_type",
        path: task === undefined ? `${src}/type` : `${src}/input/task`,
        message: task === undefined
          ? `\`type: ${s.type}\` without \`input.task\` does nothing`
          : `\`input.task: ${String(task)}\` is not a task stn runs`,
        hint:
          "use `input.task: agent.run` or `human.approval`, or a state type such as `agent`, `transform`, `sandbox`",
      });
      s.type = undefined;
    }
  }

  /**
   * An agent's settings the Go project read from `input`: the agent, and the prompt (`input.task`
   * unless it names the step kind, else `agent_task` or `userInput`). A state-level value wins.
   */
  agentInput(s: Obj, ptr: string, src: string): void {
    if (!isObj(s.input)) return;
    const input = { ...s.input };
    if (input.task === "agent.run" || input.task === "agent.hierarchy.run") delete input.task;
    for (
      const [from, to] of [["agent", "agent"], ["task", "task"], ["agent_task", "task"], [
        "userInput",
        "task",
      ]]
    ) {
      if (!(from in input)) continue;
      if (!(to in s)) {
        s[to] = input[from];
        this.moved(`${ptr}/${to}`, `${src}/input/${from}`);
      }
      delete input[from];
    }
    if (Object.keys(input).length > 0) s.input = input;
    else delete s.input;
  }

  /** An approval's Go-project fields: `approval_title` is its label, `timeout_seconds` its timeout. */
  approval(s: Obj, ptr: string, src: string): void {
    if ("approval_title" in s) {
      if ("name" in s) delete s.approval_title;
      else this.rename(s, { from: "approval_title", to: "name" }, ptr, src);
    }
    if ("timeout_seconds" in s && !("timeout" in s)) {
      const v = s.timeout_seconds;
      s.timeout = typeof v === "number" ? `${v}s` : v;
      this.moved(`${ptr}/timeout`, `${src}/timeout_seconds`);
    }
    delete s.timeout_seconds;
    if (isObj(s.input) && "summary_path" in s.input) {
      this.problems.push({
        code: "unsupported_field",
        path: `${src}/input/summary_path`,
        message: "`summary_path` is not supported: stn shows the approver only the `message`",
        hint: 'put the summary in the message with a template, e.g. `message: "Deploy? ${summary.text}"`',
      });
      const { summary_path: _, ...rest } = s.input;
      if (Object.keys(rest).length > 0) s.input = rest;
      else delete s.input;
    }
  }

  /** The Go project's `retry`: `backoff` as a duration or a curve; `retry_on` has no stn equivalent. */
  retry(raw: Obj, ptr: string, at: string): Obj {
    const r: Obj = { ...raw };
    if ("backoff" in r) {
      const v = r.backoff;
      delete r.backoff;
      if (typeof v === "string" && parseDuration(v) !== null && !("initial_interval" in r)) {
        r.initial_interval = v;
        this.moved(`${ptr}/initial_interval`, `${at}/backoff`);
      } else if (v === "exponential" || v === "fixed" || v === "constant") {
        if (!("backoff_coefficient" in r)) r.backoff_coefficient = v === "exponential" ? 2 : 1;
      } else {
        this.problems.push({
          code: "unsupported_field",
          path: `${at}/backoff`,
          message: `retry \`backoff: ${JSON.stringify(v)}\` has no stn equivalent`,
          hint:
            "stn backs off exponentially: `initial_interval` (a duration), `backoff_coefficient`, `max_interval`",
        });
      }
    }
    if ("retry_on" in r) {
      delete r.retry_on;
      this.problems.push({
        code: "unsupported_field",
        path: `${at}/retry_on`,
        message: "`retry_on` is not supported: stn retries every failure up to `max_attempts`",
        hint: "list the error codes that must not be retried in `non_retryable` instead",
      });
    }
    return r;
  }

  /** Approval and timer settings the Go project read from `input.*`. */
  goInput(s: Obj, ptr: string, src: string): void {
    if (!isObj(s.input)) return;
    const input = { ...s.input };
    const lift = (from: string, to: string, convert: (v: unknown) => unknown = (v) => v) => {
      if (!(from in input) || to in s) return;
      s[to] = convert(input[from]);
      delete input[from];
      this.moved(`${ptr}/${to}`, `${src}/input/${from}`);
    };
    if (s.type === "human_approval") {
      lift("message", "message");
      lift("approvers", "approvers");
      lift("timeout_seconds", "timeout", (v) => (typeof v === "number" ? `${v}s` : v));
      // Station's devops examples spell it so (Station itself read only timeout_seconds).
      lift("timeoutSeconds", "timeout", (v) => (typeof v === "number" ? `${v}s` : v));
    } else {
      lift("duration", "duration");
    }
    if (Object.keys(input).length > 0) s.input = input;
    else delete s.input;
  }

  /** Nested state lists, wherever the state's type keeps them (parallel branches, foreach iterator, …). */
  blocks(s: Obj, ptr: string, src: string): void {
    for (const path of stepType(String(s.type))?.blocks ?? []) {
      Object.assign(s, mapAt(s, path, (b, at) => this.block(b, ptr + at, src + at)));
    }
  }

  block(raw: unknown, ptr: string, src: string): unknown {
    if (!isObj(raw)) return raw;
    const b: Obj = { ...raw };
    if (Array.isArray(b.states)) {
      b.states = b.states.map((st, i) => this.state(st, `${ptr}/states/${i}`, `${src}/states/${i}`));
    }
    return b;
  }

  /** A `cron` start state (the Go project's schedule form) becomes `schedule`; the run starts at its next. */
  cronStart(def: Obj): void {
    const states = def.states as unknown[];
    const startId = typeof def.start === "string" ? def.start : undefined;
    const idx = states.findIndex((s, i) =>
      isObj(s) && s.type === "cron" && (startId === undefined ? i === 0 : (s.id ?? s.name) === startId)
    );
    if (idx < 0) return;
    const cron = states[idx] as Obj;
    const src = `/states/${idx}`;
    if ("schedule" in def) {
      this.problems.push({
        code: "conflicting_alias",
        path: src,
        message: "both a `cron` start state and a top-level `schedule` are set",
        hint: "keep the top-level `schedule`",
      });
      return;
    }
    const schedule: Obj = {};
    for (const key of ["cron", "timezone", "input", "enabled"]) {
      if (key in cron) {
        schedule[key] = cron[key];
        this.moved(`/schedule/${key}`, `${src}/${key}`);
      }
    }
    this.moved("/schedule", src);
    def.schedule = schedule;
    const next = cron.next ?? cron.transition;
    if (typeof next === "string") {
      def.start = next;
      this.moved("/start", `${src}/${"next" in cron ? "next" : "transition"}`);
    } else if (states.length > idx + 1) {
      delete def.start;
    }
    def.states = states.filter((_, i) => i !== idx);
    for (let i = idx; i < states.length - 1; i++) this.shifts.set(`/states/${i}`, `/states/${i + 1}`);
  }
}

/** A definition taken out of the Go project's API body, and where its parts were in that body. */
export interface Unwrapped {
  value: unknown;
  /** Maps a pointer in the definition to the pointer in what the user wrote (identity for a plain file). */
  sourcePath(pointer: string): string;
}

/** The Go project's API body `{workflowId, name, definition: {...}}`, unwrapped to the definition. */
export function unwrapApiBody(raw: unknown): Unwrapped {
  if (!isObj(raw) || !isObj(raw.definition) || "states" in raw) return { value: raw, sourcePath: (p) => p };
  const def: Obj = { ...raw.definition };
  // The body's own fields fill what the definition lacks; issues about them point at the body's field.
  const lifted = new Map<string, string>();
  for (const [from, to] of [["workflowId", "id"], ["name", "name"], ["description", "description"]]) {
    if (def[to] === undefined && typeof raw[from] === "string") {
      def[to] = raw[from];
      lifted.set(`/${to}`, `/${from}`);
    }
  }
  return {
    value: def,
    sourcePath(p) {
      const top = /^\/[^/]*/.exec(p)?.[0] ?? "";
      const hit = lifted.get(top);
      return hit !== undefined ? hit + p.slice(top.length) : `/definition${p}`;
    },
  };
}

/** Rewrites aliases (see the module comment); `value` must be an object. */
export function normalizeAliases(raw: Obj): Normalized {
  const w = new Rewriter();
  const def: Obj = { ...raw };
  if (Array.isArray(def.states)) {
    def.states = def.states.map((s, i) => w.state(s, `/states/${i}`, `/states/${i}`));
    w.cronStart(def);
  }
  if (isObj(def.defaults) && isObj(def.defaults.retry)) {
    def.defaults = {
      ...def.defaults,
      retry: w.retry(def.defaults.retry, "/defaults/retry", "/defaults/retry"),
    };
  }
  return { value: def, problems: w.problems, sourcePath: (p) => w.sourcePath(p) };
}
