import { StationError } from "../../errors.ts";
import { hasPlaceholder, quoteBarePlaceholders } from "../../environment_files/placeholders.ts";
import { isSecretName } from "../../environment_files/secrets.ts";

/**
 * A bundle never carries a secret: every value in an MCP config under a secret-looking key (TOKEN,
 * KEY, SECRET, PASSWORD, CREDENTIAL, AUTH — e.g. `env.GITHUB_TOKEN`, `headers.Authorization`) must come
 * from a `{{ .NAME }}` placeholder, so its value stays in variables.yml on this machine.
 */

function walk(value: unknown, path: string[], found: string[]): void {
  if (Array.isArray(value)) value.forEach((v, i) => walk(v, [...path, String(i)], found));
  else if (value && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      if (isSecretName(k) && typeof v === "string" && v.trim() !== "" && !hasPlaceholder(v)) {
        found.push([...path, k].join("."));
      }
      walk(v, [...path, k], found);
    }
  }
}

/** Throws 422 `bundle_secret` when an MCP config holds a literal value under a secret-looking key. */
export function refuseLiteralSecrets(file: string, text: string): void {
  let parsed: unknown;
  try {
    parsed = JSON.parse(quoteBarePlaceholders(text));
  } catch {
    return; // not JSON: nothing keyed to check (sync reports the file as invalid)
  }
  const found: string[] = [];
  walk(parsed, [], found);
  if (found.length === 0) return;
  throw new StationError(
    "bundle_secret",
    `${file} holds a literal secret at ${found.join(", ")}; a bundle never carries secrets`,
    {
      hint:
        `replace the value with a placeholder such as "{{ .${
          found[0].split(".").pop()!.toUpperCase().replace(/[^A-Z0-9_]/g, "_")
        } }}" ` +
        "and keep the value in variables.yml (`stn env vars set`)",
      details: { file, keys: found },
    },
  );
}
