import { Ajv2020 } from "ajv/dist/2020.js";
import { CronPattern } from "croner";
import { parseDuration } from "../../lib/duration.ts";
import { checkTemplates, parseCheck } from "../expr.ts";
import { normalizeAliases, unwrapApiBody } from "./normalize.ts";
import {
  AgentState,
  ForeachState,
  HumanApprovalState,
  InjectState,
  ParallelState,
  RetryPolicy,
  SandboxState,
  Schedule,
  STATE_TYPES,
  SwitchState,
  TimerState,
  TransformState,
  TryState,
  WORKFLOW_ID,
  WorkflowDefinition,
} from "./schema.ts";
import { pointerSegments, type Position, toPointer } from "./source.ts";

/**
 * The workflow validator (shared/spec/workflows.md): every problem as an issue with a stable code,
 * a JSON pointer into what the user wrote, its line/column when the source is text, and a hint.
 * Checks run on the alias-normalised form; pointers are mapped back to the user's spelling.
 */

/** One validation finding. */
export interface ValidationIssue {
  code: string;
  /** JSON pointer into the file as written, e.g. `/states/3/conditions/0/if`. */
  path: string;
  line?: number;
  column?: number;
  message: string;
  hint?: string;
}

/** The validator's answer; `definition` is the normalised definition when valid. */
export interface ValidationResult {
  valid: boolean;
  errors: ValidationIssue[];
  warnings: ValidationIssue[];
  definition?: WorkflowDefinition;
}

export interface ValidateOptions {
  /** Finds the source position of a pointer (text sources); see ParsedSource.locate. */
  locate?: (segments: string[], options?: { value?: boolean; offset?: number }) => Position | undefined;
  /** The id to use when the definition has none (from the file name). */
  defaultId?: string;
}

type Obj = Record<string, unknown>;
/** An issue before positions; `source: true` when its path already names what the user wrote. */
type Found = {
  code: string;
  path: string;
  message: string;
  hint?: string;
  source?: boolean;
  offset?: number;
};

/** Issues about a value (rather than a field being there at all) point at the value, not the key. */
const VALUE_CODES = new Set([
  "invalid_expression",
  "invalid_template",
  "invalid_duration",
  "invalid_cron",
  "invalid_timezone",
  "invalid_value",
  "invalid_agent",
  "invalid_id",
  "unknown_target",
  "unknown_type",
]);

const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

function keysOf(schema: unknown): string[] {
  return Object.keys((schema as { shape: Obj }).shape);
}

const STATE_KEYS: Record<string, string[]> = {
  agent: keysOf(AgentState),
  transform: keysOf(TransformState),
  inject: keysOf(InjectState),
  switch: keysOf(SwitchState),
  parallel: keysOf(ParallelState),
  foreach: keysOf(ForeachState),
  human_approval: keysOf(HumanApprovalState),
  timer: keysOf(TimerState),
  try: keysOf(TryState),
  sandbox: keysOf(SandboxState),
};
const TOP_KEYS = keysOf(WorkflowDefinition);
const RETRY_KEYS = keysOf(RetryPolicy);
const SCHEDULE_KEYS = keysOf(Schedule);
const BLOCK_KEYS = ["start", "states"];
const BRANCH_KEYS = ["name", "start", "states"];
const TYPE_ALIASES = ["set", "sleep", "delay", "operation", "cron"];

const SCHEMA_KEYWORDS = [
  "type",
  "properties",
  "required",
  "items",
  "enum",
  "const",
  "default",
  "format",
  "minimum",
  "maximum",
  "minLength",
  "maxLength",
  "pattern",
  "additionalProperties",
  "description",
  "title",
  "examples",
  "minItems",
  "maxItems",
  "oneOf",
  "anyOf",
  "allOf",
];

/**
 * JSON Schemas and time zones already found valid. Compiling a schema costs milliseconds and a sync
 * re-validates the same files at every start; bounded so it cannot grow without limit.
 */
const remember = {
  schemas: new Set<string>(),
  zones: new Set<string>(),
  add(set: Set<string>, key: string): void {
    if (set.size >= 1000) set.delete(set.values().next().value!);
    set.add(key);
  },
};

let ajvInstance: Ajv2020 | undefined;

/** One shared Ajv (building one compiles the meta-schemas, which costs milliseconds). */
function schemaChecker(): Ajv2020 {
  // strictSchema rejects unknown keywords, so a misspelt `requried` is an error rather than ignored.
  return ajvInstance ??= new Ajv2020({
    strict: false,
    strictSchema: true,
    validateFormats: false,
    allErrors: false,
  });
}

/** The pointer of the first place a key appears in a value (depth-first). */
function findKey(v: unknown, key: string, at = ""): string | undefined {
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const hit = findKey(v[i], key, `${at}/${i}`);
      if (hit) return hit;
    }
  } else if (isObj(v)) {
    if (key in v) return `${at}/${toPointer([key]).slice(1)}`;
    for (const [k, x] of Object.entries(v)) {
      const hit = findKey(x, key, `${at}/${toPointer([k]).slice(1)}`);
      if (hit) return hit;
    }
  }
  return undefined;
}

/** Edit distance (optimal string alignment), for "did you mean". */
function distance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
      // Swapped neighbours ("dnoe") count as one edit: the commonest typo.
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.length][b.length];
}

/** The closest candidate to a misspelt word, when one is close enough to be a likely typo. */
export function didYouMean(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestD = Infinity;
  for (const c of candidates) {
    const d = distance(word.toLowerCase(), c.toLowerCase());
    if (d < bestD) [best, bestD] = [c, d];
  }
  return best !== undefined && bestD <= Math.max(1, Math.floor(word.length / 3)) ? best : undefined;
}

/** The outgoing transitions of a state, with the pointer of each. */
function transitions(s: Obj, p: string): Array<{ target: string; path: string }> {
  const out: Array<{ target: string; path: string }> = [];
  const add = (v: unknown, path: string) => typeof v === "string" && out.push({ target: v, path });
  add(s.next, `${p}/next`);
  add(s.defaultNext, `${p}/defaultNext`);
  add(s.onReject, `${p}/onReject`);
  add(s.onTimeout, `${p}/onTimeout`);
  if (Array.isArray(s.conditions)) {
    s.conditions.forEach((c, i) => isObj(c) && add(c.next, `${p}/conditions/${i}/next`));
  }
  return out;
}

/** True when a state can end its block or the run (rather than always moving to another state). */
function canExit(s: Obj): boolean {
  if (s.end === true) return true;
  if (s.type === "switch") return s.defaultNext === undefined;
  if (s.type === "human_approval" && (s.onReject === undefined || s.onTimeout === undefined)) return true;
  return s.next === undefined;
}

class Checker {
  readonly errors: Found[] = [];
  readonly warnings: Found[] = [];
  /** Every state id in the definition, across nested blocks, with its pointer. */
  readonly ids = new Map<string, string>();
  /** Every state id anywhere, collected before the walk so a target in a later block is recognised. */
  readonly allIds = new Set<string>();
  agentNoted = false;
  /** Maps a normalised pointer to what the user wrote (alias problems are reported in source terms). */
  readonly source: (pointer: string) => string;

  constructor(source: (pointer: string) => string = (p) => p) {
    this.source = source;
  }

  error(code: string, path: string, message: string, hint?: string, offset?: number): void {
    this.errors.push({ code, path, message, hint, offset });
  }

  keys(o: Obj, allowed: readonly string[], p: string, what: string): void {
    for (const k of Object.keys(o)) {
      if (allowed.includes(k)) continue;
      const near = didYouMean(k, allowed);
      this.error(
        "unknown_field",
        `${p}/${k}`,
        `unknown field \`${k}\` in ${what}`,
        near ? `did you mean \`${near}\`?` : `allowed fields: ${allowed.join(", ")}`,
      );
    }
  }

  duration(v: unknown, p: string): void {
    if (v === undefined) return;
    if (typeof v !== "string" || parseDuration(v) === null) {
      this.error(
        "invalid_duration",
        p,
        `invalid duration ${JSON.stringify(v)}`,
        'write durations like "30s", "5m", "1h30m"',
      );
    }
  }

  expression(v: unknown, p: string): void {
    if (typeof v !== "string") return;
    const problem = parseCheck(v);
    if (problem) {
      this.error(
        "invalid_expression",
        p,
        `JSONata does not parse at position ${problem.position}: ${problem.message}`,
        problem.hint ?? "see https://docs.jsonata.org for the expression syntax",
        problem.position,
      );
    }
  }

  /** `${…}` templates anywhere inside a value. */
  templates(v: unknown, p: string): void {
    if (typeof v === "string") {
      if (/\{\{.*?\}\}/s.test(v)) {
        this.warnings.push({
          code: "literal_braces",
          path: p,
          message: "`{{ … }}` is not a template in stn: it stays literal text",
          hint: "write `${ expr }` (JSONata); `stn workflow migrate` converts Station's `{{ … }}`",
        });
      }
      for (const problem of checkTemplates(v)) {
        this.error(
          "invalid_template",
          p,
          `template does not parse at position ${problem.position}: ${problem.message}`,
          problem.hint ?? "templates are `${ jsonata }`; write `$${` for a literal `${`",
          problem.position,
        );
      }
    } else if (Array.isArray(v)) v.forEach((x, i) => this.templates(x, `${p}/${i}`));
    else if (isObj(v)) {
      for (const [k, x] of Object.entries(v)) this.templates(x, `${p}/${toPointer([k]).slice(1)}`);
    }
  }

  retry(v: unknown, p: string): void {
    if (!isObj(v)) return;
    this.keys(v, RETRY_KEYS, p, "retry");
    this.duration(v.initial_interval, `${p}/initial_interval`);
    this.duration(v.max_interval, `${p}/max_interval`);
  }

  jsonSchema(v: unknown, p: string): void {
    if (v === undefined) return;
    if (!isObj(v)) return; // zod reports the type
    const key = JSON.stringify(v);
    if (remember.schemas.has(key)) return;
    const ajv = schemaChecker();
    if (!ajv.validateSchema(v)) {
      const e = ajv.errors?.[0];
      this.error(
        "invalid_json_schema",
        `${p}${e?.instancePath ?? ""}`,
        `not a valid JSON Schema: ${e ? `${e.instancePath || "/"} ${e.message}` : "rejected"}`,
        "schemas follow JSON Schema draft 2020-12 (type, properties, required, enum, items…)",
      );
      return;
    }
    try {
      ajv.compile(v);
      ajv.removeSchema(v); // checked, not kept: the checker must not grow with every definition
      remember.add(remember.schemas, key);
    } catch (err) {
      const message = (err as Error).message;
      const keyword = /unknown keyword: "([^"]+)"/.exec(message)?.[1];
      const where = keyword ? findKey(v, keyword) : undefined;
      const near = keyword ? didYouMean(keyword, SCHEMA_KEYWORDS) : undefined;
      this.error(
        "invalid_json_schema",
        where ? `${p}${where}` : p,
        keyword ? `unknown JSON Schema keyword \`${keyword}\`` : `JSON Schema does not compile: ${message}`,
        near ? `did you mean \`${near}\`?` : "schemas follow JSON Schema draft 2020-12",
      );
    }
  }

  schedule(v: unknown, p: string): void {
    if (!isObj(v)) return;
    this.keys(v, SCHEDULE_KEYS, p, "schedule");
    if (typeof v.cron === "string") {
      try {
        new CronPattern(v.cron);
      } catch (err) {
        this.error(
          "invalid_cron",
          `${p}/cron`,
          `invalid cron expression ${JSON.stringify(v.cron)}: ${(err as Error).message}`,
          'five or six fields, e.g. "0 9 * * 1-5" (09:00 on weekdays) or "*/15 * * * *"',
        );
      }
    }
    if (typeof v.timezone === "string" && !remember.zones.has(v.timezone)) {
      try {
        new Intl.DateTimeFormat("en", { timeZone: v.timezone });
        remember.add(remember.zones, v.timezone);
      } catch {
        this.error(
          "invalid_timezone",
          `${p}/timezone`,
          `unknown time zone ${JSON.stringify(v.timezone)}`,
          'use an IANA name such as "UTC", "Europe/Berlin" or "America/New_York"',
        );
      }
    }
  }

  /** A list of states with its own transitions; `start` is checked against it. */
  block(states: unknown, p: string, start: unknown, startPath: string): void {
    if (!Array.isArray(states) || states.length === 0) {
      this.error(
        "missing_states",
        `${p}`,
        "a block needs at least one state",
        "add `states:` with at least one state",
      );
      return;
    }
    const local = new Map<string, Obj>();
    states.forEach((s, i) => {
      const sp = `${p}/${i}`;
      const checked = this.state(s, sp);
      if (checked && typeof checked.id === "string") local.set(checked.id, checked);
    });
    const target = (t: string, path: string) => {
      if (local.has(t)) return;
      const elsewhere = this.allIds.has(t);
      const near = didYouMean(t, [...local.keys()]);
      this.error(
        "unknown_target",
        path,
        `\`${t}\` is not a state in this block`,
        elsewhere
          ? `\`${t}\` is in another block: transitions stay inside their own block`
          : near
          ? `did you mean \`${near}\`?`
          : `states here: ${[...local.keys()].join(", ")}`,
      );
    };
    if (typeof start === "string") target(start, startPath);
    states.forEach((s, i) => {
      if (isObj(s)) { for (const t of transitions(s, `${p}/${i}`)) target(t.target, t.path); }
    });
    this.graph(states, p, typeof start === "string" && local.has(start) ? start : undefined, local);
  }

  /** Warnings: states nothing leads to, and cycles with no way out. */
  graph(states: unknown[], p: string, start: string | undefined, local: Map<string, Obj>): void {
    const list = states.filter(isObj).filter((s) => typeof s.id === "string");
    if (list.length === 0) return;
    const edges = new Map<string, string[]>();
    for (const s of list) {
      edges.set(s.id as string, transitions(s, "").map((t) => t.target).filter((t) => local.has(t)));
    }
    const first = start ?? (list[0].id as string);
    const seen = new Set<string>([first]);
    const queue = [first];
    while (queue.length) {
      for (const n of edges.get(queue.shift()!) ?? []) if (!seen.has(n)) seen.add(n), queue.push(n);
    }
    states.forEach((s, i) => {
      if (isObj(s) && typeof s.id === "string" && !seen.has(s.id)) {
        this.warnings.push({
          code: "unreachable_state",
          path: `${p}/${i}`,
          message: `state \`${s.id}\` is never reached from \`${first}\``,
          hint: "point a `next` (or a switch condition) at it, or remove it",
        });
      }
    });
    // A reachable group of states that only lead to each other, none of which can end, loops forever.
    for (const id of seen) {
      const group = new Set<string>(edges.get(id));
      const q = [...group];
      while (q.length) {
        for (const n of edges.get(q.shift()!) ?? []) if (!group.has(n)) group.add(n), q.push(n);
      }
      if (!group.has(id) || [...group].some((g) => canExit(local.get(g)!))) continue;
      const idx = states.findIndex((s) => isObj(s) && s.id === id);
      this.warnings.push({
        code: "cycle_without_exit",
        path: `${p}/${idx}`,
        message: `from \`${id}\` the states ${
          [...group].map((g) => `\`${g}\``).join(", ")
        } loop with no way out`,
        hint:
          "give one of them an exit: a switch condition or defaultNext leading out, or a state without `next`",
      });
      break;
    }
  }

  state(raw: unknown, p: string): Obj | undefined {
    if (!isObj(raw)) {
      this.error(
        "invalid_state",
        p,
        "a state must be a mapping",
        "write a state as `- id: …` with `type:` below it",
      );
      return undefined;
    }
    const s = raw;
    if (s.id === undefined) {
      this.error("missing_state_id", p, "state has no `id`", "give every state an `id` (or `name`)");
    } else if (typeof s.id === "string") {
      const prev = this.ids.get(s.id);
      if (prev !== undefined) {
        this.error(
          "duplicate_id",
          `${p}/id`,
          `state id \`${s.id}\` is already used at ${this.source(prev)}`,
          "state ids are unique in the whole workflow, nested blocks included",
        );
      } else this.ids.set(s.id, p);
    }
    if (s.type === undefined) {
      // An `operation` whose task stn does not run already has its unknown_type (a source path).
      const src = this.source(p);
      if (!this.errors.some((e) => e.code === "unknown_type" && e.source && e.path.startsWith(src + "/"))) {
        this.error("missing_type", p, "state has no `type`", `one of: ${STATE_TYPES.join(", ")}`);
      }
      return s;
    }
    if (typeof s.type !== "string" || !(s.type in STATE_KEYS)) {
      const near = typeof s.type === "string"
        ? didYouMean(s.type, [...STATE_TYPES, ...TYPE_ALIASES])
        : undefined;
      this.error(
        "unknown_type",
        `${p}/type`,
        `unknown state type ${JSON.stringify(s.type)}`,
        near ? `did you mean \`${near}\`?` : `one of: ${STATE_TYPES.join(", ")}`,
      );
      return s;
    }
    this.keys(s, STATE_KEYS[s.type], p, `a ${s.type} state`);
    if (s.next !== undefined && s.end === true) {
      this.error("conflicting_transition", `${p}/end`, "`end: true` and `next` are both set", "keep one");
    }
    this.duration(s.timeout, `${p}/timeout`);
    this.retry(s.retry, `${p}/retry`);
    if (isObj(s.output)) {
      for (const [k, e] of Object.entries(s.output)) this.expression(e, `${p}/output/${k}`);
    }
    this.byType(s, p);
    return s;
  }

  byType(s: Obj, p: string): void {
    switch (s.type) {
      case "agent":
        if (
          typeof s.agent === "string" &&
          !/^[A-Za-z0-9][A-Za-z0-9_.-]*(@[A-Za-z0-9][A-Za-z0-9_.-]*)?$/.test(s.agent)
        ) {
          this.error(
            "invalid_agent",
            `${p}/agent`,
            `invalid agent reference ${JSON.stringify(s.agent)}`,
            "write `name` or `name@environment`",
          );
        } else if (!this.agentNoted) {
          this.agentNoted = true;
          this.warnings.push({
            code: "agent_not_checked",
            path: `${p}/agent`,
            message: "agent references are not checked yet: this station has no agent registry",
            hint: "a missing agent fails its step at run time",
          });
        }
        this.templates(s.task, `${p}/task`);
        if (isObj(s.input)) {
          this.keys(s.input, ["variables"], `${p}/input`, "agent input");
          this.templates(s.input, `${p}/input`);
        }
        break;
      case "transform":
        this.expression(s.expression, `${p}/expression`);
        break;
      case "inject":
        if (s.data === undefined) {
          this.error("missing_field", p, "`data` is required in an inject state", "add `data:`");
        }
        this.templates(s.data, `${p}/data`);
        break;
      case "switch":
        this.expression(s.dataPath, `${p}/dataPath`);
        if (Array.isArray(s.conditions)) {
          s.conditions.forEach((c, i) => {
            if (!isObj(c)) return;
            this.keys(c, ["if", "next"], `${p}/conditions/${i}`, "a condition");
            this.expression(c.if, `${p}/conditions/${i}/if`);
          });
        }
        break;
      case "parallel":
        if (Array.isArray(s.branches)) {
          const names = new Set<string>();
          s.branches.forEach((b, i) => {
            const bp = `${p}/branches/${i}`;
            if (!isObj(b)) return;
            this.keys(b, BRANCH_KEYS, bp, "a branch");
            if (typeof b.name === "string") {
              if (names.has(b.name)) {
                this.error(
                  "duplicate_id",
                  `${bp}/name`,
                  `branch name \`${b.name}\` is used twice`,
                  "branch names key the output: make them unique",
                );
              }
              names.add(b.name);
            }
            this.block(b.states, `${bp}/states`, b.start, `${bp}/start`);
          });
        }
        if (isObj(s.join)) this.keys(s.join, ["mode"], `${p}/join`, "join");
        break;
      case "foreach":
        this.expression(s.itemsPath, `${p}/itemsPath`);
        this.nested(s.iterator, `${p}/iterator`, "iterator");
        break;
      case "human_approval":
        this.templates(s.message, `${p}/message`);
        if (Array.isArray(s.approvers) && s.approvers.length > 0) {
          this.warnings.push({
            code: "approvers_not_enforced",
            path: `${p}/approvers`,
            message:
              "`approvers` is stored and shown, but not enforced: anyone who can call the API may decide",
            hint: "restrict who reaches the API (server.api_token) until stn has users",
          });
        }
        break;
      case "timer":
        if (s.duration === undefined && s.until === undefined) {
          this.error("missing_field", p, "a timer needs `duration` or `until`", 'e.g. `duration: "10m"`');
        } else if (s.duration !== undefined && s.until !== undefined) {
          this.error("conflicting_fields", `${p}/until`, "`duration` and `until` are both set", "keep one");
        }
        if (typeof s.duration === "string" && !s.duration.includes("${")) {
          this.duration(s.duration, `${p}/duration`);
        }
        if (typeof s.until === "string" && !s.until.includes("${") && Number.isNaN(Date.parse(s.until))) {
          this.error(
            "invalid_value",
            `${p}/until`,
            `\`until\` is not a date: ${JSON.stringify(s.until)}`,
            'an ISO-8601 instant, e.g. "2030-01-01T09:00:00Z"',
          );
        }
        this.templates(s.duration, `${p}/duration`);
        this.templates(s.until, `${p}/until`);
        break;
      case "try":
        this.nested(s.try, `${p}/try`, "try");
        if (s.catch !== undefined) this.nested(s.catch, `${p}/catch`, "catch");
        if (s.finally !== undefined) this.nested(s.finally, `${p}/finally`, "finally");
        break;
      case "sandbox":
        if (s.command === undefined && s.script === undefined) {
          this.error(
            "missing_field",
            p,
            "a sandbox state needs `command` or `script`",
            'e.g. `command: ["python", "main.py"]`',
          );
        } else if (s.command !== undefined && s.script !== undefined) {
          this.error("conflicting_fields", `${p}/script`, "`command` and `script` are both set", "keep one");
        }
        this.templates(s.command, `${p}/command`);
        if (Array.isArray(s.stage)) {
          s.stage.forEach((x, i) =>
            isObj(x) && this.keys(x, ["file_key", "destination"], `${p}/stage/${i}`, "a stage entry")
          );
        }
        break;
    }
  }

  nested(v: unknown, p: string, what: string): void {
    if (v === undefined) {
      this.error("missing_field", p, `\`${what}\` block is required`, "a block is `{start?, states: [...]}`");
      return;
    }
    if (!isObj(v)) return;
    this.keys(v, BLOCK_KEYS, p, `the ${what} block`);
    this.block(v.states, `${p}/states`, v.start, `${p}/start`);
  }

  /** Collects every state id in the definition (pre-pass for the "in another block" hint). */
  collect(v: unknown): void {
    if (Array.isArray(v)) v.forEach((x) => this.collect(x));
    else if (isObj(v)) {
      if (typeof v.id === "string" && typeof v.type === "string") this.allIds.add(v.id);
      for (const x of Object.values(v)) if (typeof x === "object") this.collect(x);
    }
  }

  definition(d: Obj): void {
    this.collect(d.states);
    this.keys(d, TOP_KEYS, "", "the workflow");
    if (d.id === undefined) {
      this.error(
        "missing_id",
        "/id",
        "the workflow has no `id`",
        "add `id:` or name the file `<id>.workflow.yaml`",
      );
    } else if (typeof d.id !== "string" || !WORKFLOW_ID.test(d.id)) {
      this.error(
        "invalid_id",
        "/id",
        `invalid workflow id ${JSON.stringify(d.id)}`,
        "ids match [a-z0-9][a-z0-9_-]*, e.g. `deploy-api`",
      );
    }
    if (d.states === undefined) {
      this.error(
        "missing_states",
        "/states",
        "the workflow has no `states`",
        "add `states:` with at least one state",
      );
    } else this.block(d.states, "/states", d.start, "/start");
    this.jsonSchema(d.inputSchema, "/inputSchema");
    this.jsonSchema(d.outputSchema, "/outputSchema");
    this.schedule(d.schedule, "/schedule");
    if (isObj(d.defaults)) {
      this.keys(d.defaults, ["timeout", "retry"], "/defaults", "defaults");
      this.duration(d.defaults.timeout, "/defaults/timeout");
      this.retry(d.defaults.retry, "/defaults/retry");
    }
  }
}

function valueAt(root: unknown, segs: readonly PropertyKey[]): unknown {
  let v: unknown = root;
  for (const s of segs) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<PropertyKey, unknown>)[s];
  }
  return v;
}

/** Validates a parsed definition (native, Go-project or API-body form). */
export function validateDefinition(raw: unknown, options: ValidateOptions = {}): ValidationResult {
  const finish = (
    errors: Found[],
    warnings: Found[],
    map: (p: string) => string,
    definition?: WorkflowDefinition,
  ) => {
    const place = (f: Found): ValidationIssue => {
      const path = unwrapped.sourcePath(f.source ? f.path : map(f.path));
      const pos = options.locate?.(pointerSegments(path), {
        value: VALUE_CODES.has(f.code),
        offset: f.offset,
      });
      const issue: ValidationIssue = { code: f.code, path: path || "/", message: f.message };
      if (pos) [issue.line, issue.column] = [pos.line, pos.column];
      if (f.hint) issue.hint = f.hint;
      return issue;
    };
    return {
      valid: errors.length === 0,
      errors: errors.map(place),
      warnings: warnings.map(place),
      ...(errors.length === 0 && definition ? { definition } : {}),
    };
  };
  const unwrapped = unwrapApiBody(raw);
  const body = unwrapped.value;
  if (!isObj(body)) {
    const what = body === null || body === undefined ? "empty" : Array.isArray(body) ? "a list" : typeof body;
    return finish(
      [{
        code: "invalid_definition",
        path: "",
        message: `a workflow must be a mapping, got ${what}`,
        hint: "start the file with `id:` and `states:`",
      }],
      [],
      (p) => p,
    );
  }
  const withId = body.id === undefined && options.defaultId ? { ...body, id: options.defaultId } : body;
  const norm = normalizeAliases(withId);
  const c = new Checker(norm.sourcePath);
  for (const p of norm.problems) c.errors.push({ ...p, source: true });
  c.definition(norm.value);

  // zod catches what the walk does not (value types, ranges); anything at or under a reported path is a repeat.
  const parsed = WorkflowDefinition.safeParse(norm.value);
  if (!parsed.success) {
    const reported = c.errors.map((e) => (e.source ? e.path : norm.sourcePath(e.path)));
    for (const issue of parsed.error.issues) {
      if (issue.code === "unrecognized_keys" || issue.code === "invalid_union") continue;
      const path = toPointer(issue.path as (string | number)[]);
      const src = norm.sourcePath(path);
      if (reported.some((r) => src.startsWith(r) || r.startsWith(src + "/") || r === src)) continue;
      const missing = valueAt(norm.value, issue.path) === undefined && issue.code === "invalid_type";
      c.errors.push({
        code: missing ? "missing_field" : "invalid_value",
        path,
        message: missing
          ? `\`${String(issue.path.at(-1))}\` is required`
          : `${String(issue.path.at(-1) ?? "value")}: ${issue.message}`,
        hint: missing
          ? `add \`${String(issue.path.at(-1))}\` (README "Workflow definitions" lists each state's fields)`
          : 'README "Workflow definitions" lists each field and its allowed values',
      });
      reported.push(src);
    }
  }
  return finish(c.errors, c.warnings, norm.sourcePath, parsed.success ? parsed.data : undefined);
}
