/**
 * An API answer's check, compiled ahead of time from its contract (scripts/client_answers.ts writes them into
 * src/client/answers/): the client checks answers without loading zod.
 */

/** Ajv's standalone check of one answer: true when the value matches (defaults filled in), else `errors`. */
export interface AnswerCheck {
  (value: unknown): boolean;
  errors?: { instancePath: string; message?: string }[] | null;
}

/** The check of an answer whose checked value is a T. */
export interface Answer<T> {
  readonly name: string;
  readonly check: AnswerCheck;
  /** Never set: carries T for the type checker. */
  readonly type?: T;
}

/** An answer's check, typed as its contract (used by the generated src/client/answers/). */
export function answer<T>(name: string, check: AnswerCheck): Answer<T> {
  return { name, check };
}
