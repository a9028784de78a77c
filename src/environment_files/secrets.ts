/**
 * Secret-looking variable names (docs/design/agents.md#variables-and-secrets): a name containing one of these
 * words is a secret, whose value is never printed, logged or returned by the API — only whether it is set.
 */
export const SECRET_WORDS = ["TOKEN", "KEY", "SECRET", "PASSWORD", "CREDENTIAL", "AUTH"] as const;

/** What stands in for a secret's value in every output. */
export const MASK = "********";

/** True when a variable (or config key) name looks like it holds a secret. */
export function isSecretName(name: string): boolean {
  const upper = name.toUpperCase();
  return SECRET_WORDS.some((w) => upper.includes(w));
}

/** The value as it may be shown: the mask for a secret, the value itself otherwise. */
export function shownValue(name: string, value: string): string {
  return isSecretName(name) ? MASK : value;
}
