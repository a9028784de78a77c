/**
 * Zod checks that report stn's own problems (a code, a message, a hint): `rule` (a check returning
 * Problems) and `coded` (an error function for zod's own issues). Workflow step types and agent files
 * both validate with them; the validator reads what they leave in an issue's `params`.
 */

import { z } from "zod";
import { parseDuration } from "./duration.ts";

/** A finding of a rule (a step type's, an agent file's), reported like any validation issue. */
export interface Problem {
  code: string;
  message: string;
  hint?: string;
  /** Where, relative to the value the rule checked (default: the value itself). */
  at?: (string | number)[];
  /** Characters into a one-line scalar (points an expression error at the bad token). */
  offset?: number;
}

/** What an issue carries from a schema to the validator, besides its message. */
export interface IssueParams {
  code: string;
  hint?: string;
  offset?: number;
  /** Report the issue at the parent of its path (a missing state `id` is the state's problem). */
  parent?: boolean;
}

/**
 * A zod check reporting Problems. zod skips checks once a value has other issues; `always` runs it
 * anyway (object-level rules that must still be told), so such a rule must read its value defensively.
 */
export function rule<T>(
  find: (value: T) => Problem | Problem[] | undefined,
  always = false,
): z.core.$ZodCheck<T> {
  // `when` makes an `always` rule run even after an earlier field failed (zod skips it otherwise).
  return z.superRefine<T>((value, payload) => {
    const found = find(value);
    for (const p of found === undefined ? [] : Array.isArray(found) ? found : [found]) {
      const params: IssueParams = { code: p.code, hint: p.hint, offset: p.offset };
      payload.issues.push({
        code: "custom",
        input: payload.value,
        message: p.message,
        path: p.at ?? [],
        params,
        continue: true,
      });
    }
  }, always ? { when: () => true } : undefined);
}

/** A zod error function: gives zod's own issue stn's code, message and hint when `describe` knows it. */
export function coded(
  describe: (issue: z.core.$ZodRawIssue) => (IssueParams & { message: string }) | undefined,
): z.core.$ZodErrorMap {
  return (issue) => {
    const found = describe(issue);
    if (!found) return undefined;
    const { message, ...params } = found;
    (issue as { params?: IssueParams }).params = params;
    return message;
  };
}

/** How to write a duration, for the hint of an issue about one. */
export const DURATION_HINT = 'write durations like "30s", "5m", "1h30m"';

/** The problem with a duration, if it is not one ("30s", "5m", "1h30m"). */
export function durationProblem(v: unknown): Problem | undefined {
  if (typeof v === "string" && parseDuration(v) !== null) return undefined;
  return { code: "invalid_duration", message: `invalid duration ${JSON.stringify(v)}`, hint: DURATION_HINT };
}
