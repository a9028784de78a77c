import { z } from "zod";
import { didYouMean } from "../../lib/did_you_mean.ts";
import type { IssueParams } from "../steps/fields.ts";
import { stepTypeNames } from "../steps/registry.ts";
import { toPointer } from "./source.ts";

/**
 * From zod's issues to the validator's: the error map that gives zod's own issues (unknown keys,
 * missing fields, an unknown `type`) stn's codes and "did you mean" hints, and the translation of
 * every issue into a finding with a JSON pointer. Schemas name their own issues through
 * `rule`/`coded` (steps/fields.ts); this map covers the rest.
 */

/** A finding with a pointer into the normalised definition. */
export interface SchemaFinding {
  code: string;
  path: string;
  message: string;
  hint: string;
  offset?: number;
}

/** What the error map leaves on an unknown-keys issue for the translation. */
interface KeyParams extends IssueParams {
  allowed: string[];
  what: string;
}

/** The Go project's type names the loader rewrites (suggested for a misspelt type, too). */
const TYPE_ALIASES = ["set", "sleep", "delay", "operation", "cron"];
const FIELDS_HINT = 'README "Workflow definitions" lists each field and its allowed values';

function setParams(issue: z.core.$ZodRawIssue, params: IssueParams): void {
  (issue as { params?: IssueParams }).params = params;
}

/** The per-parse error map (zod calls it for issues whose schema set no message of its own). */
export function errorMap(issue: z.core.$ZodRawIssue): string | undefined {
  const inst = issue.inst;
  const discriminator = inst instanceof z.ZodDiscriminatedUnion ? inst.def.discriminator : undefined;
  const last = String(issue.path?.at(-1) ?? "value");
  const types = stepTypeNames();
  if (issue.code === "unrecognized_keys") {
    const params: KeyParams = {
      code: "unknown_field",
      allowed: inst instanceof z.ZodObject ? Object.keys(inst.shape) : [],
      what: (inst instanceof z.ZodType ? inst.description : undefined) ?? "this mapping",
    };
    setParams(issue, params);
    return "unknown field";
  }
  if (issue.code === "invalid_union" && discriminator === "type") {
    const type = (issue.input as { type?: unknown }).type;
    if (type === undefined) {
      setParams(issue, { code: "missing_type", hint: `one of: ${types.join(", ")}`, parent: true });
      return "state has no `type`";
    }
    const near = typeof type === "string" ? didYouMean(type, [...types, ...TYPE_ALIASES]) : undefined;
    setParams(issue, {
      code: "unknown_type",
      hint: near ? `did you mean \`${near}\`?` : `one of: ${types.join(", ")}`,
    });
    return `unknown state type ${JSON.stringify(type)}`;
  }
  if (issue.code === "invalid_type" && discriminator === "type") {
    setParams(issue, { code: "invalid_state", hint: "write a state as `- id: …` with `type:` below it" });
    return "a state must be a mapping";
  }
  if (issue.code === "invalid_type" && issue.input === undefined) {
    setParams(issue, {
      code: "missing_field",
      hint: `add \`${last}\` (README "Workflow definitions" lists each state's fields)`,
    });
    return `\`${last}\` is required`;
  }
  setParams(issue, { code: "invalid_value", hint: FIELDS_HINT });
  const plain = z.config().localeError?.(issue);
  return `${last}: ${typeof plain === "string" ? plain : plain?.message ?? "invalid value"}`;
}

/** The findings of one zod issue (an unknown-keys issue names several fields). */
export function findings(issue: z.core.$ZodIssue): SchemaFinding[] {
  const params = (issue as { params?: IssueParams }).params ?? { code: "invalid_value", hint: FIELDS_HINT };
  const path = issue.path as (string | number)[];
  if (issue.code === "unrecognized_keys") {
    const { allowed, what } = params as KeyParams;
    const where = what.replace("{key}", String(path.at(-1)));
    return issue.keys.map((key) => {
      const near = didYouMean(key, allowed);
      return {
        code: "unknown_field",
        path: toPointer([...path, key]),
        message: `unknown field \`${key}\` in ${where}`,
        hint: near ? `did you mean \`${near}\`?` : `allowed fields: ${allowed.join(", ")}`,
      };
    });
  }
  return [{
    code: params.code,
    path: toPointer(params.parent ? path.slice(0, -1) : path),
    message: issue.message,
    hint: params.hint ?? FIELDS_HINT,
    ...(params.offset !== undefined ? { offset: params.offset } : {}),
  }];
}
