/** The configuration reference (docs/configuration.md's table), derived from the config schema. */

import { formatDuration } from "../lib/duration.ts";
import { configKeys } from "./resolve.ts";
import { ConfigSchema, durationSchema } from "./schema.ts";

/** One row of the configuration reference: key, environment variables, default, meaning. */
export interface ConfigReferenceRow {
  key: string;
  env: string;
  default: string;
  meaning: string;
}

// Byte-sized keys read better with their unit next to the raw number users type.
const BYTE_KEY = /(_bytes|_size)$/;

function valueAt(values: unknown, path: string): unknown {
  return path.split(".").reduce(
    (node: unknown, part) =>
      typeof node === "object" && node !== null ? (node as Record<string, unknown>)[part] : undefined,
    values,
  );
}

/** 1048576 → "1 MiB": config sizes are powers of two, so their binary unit is exact. */
function iec(bytes: number): string {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (bytes >= 1024 && i < units.length - 1) bytes /= 1024, i++;
  return `${+bytes.toFixed(1)} ${units[i]}`;
}

function formatDefault(path: string, value: unknown, isDuration: boolean): string {
  if (value === undefined) return "—";
  if (isDuration && typeof value === "number") {
    return value === 0 ? "`0` (never)" : `\`${formatDuration(value)}\``;
  }
  if (typeof value === "number" && BYTE_KEY.test(path) && value >= 1024) {
    return `\`${value}\` (${iec(value)})`;
  }
  if (value && typeof value === "object" && !Array.isArray(value)) {
    return Object.entries(value).map(([k, v]) => `${k} → \`${v}\``).join(", ");
  }
  return `\`${typeof value === "string" ? value : JSON.stringify(value)}\``;
}

/** The rows of the configuration reference, derived from the config schema (keys, defaults, descriptions). */
export function configReferenceRows(): ConfigReferenceRow[] {
  const defaults = ConfigSchema.parse({});
  return configKeys().map((key) => ({
    key: `\`${key.path}\``,
    env: key.env.map((e) => `\`${e}\``).join(", "),
    default: formatDefault(key.path, valueAt(defaults, key.path), key.schema === durationSchema),
    meaning: (key.description ?? "").replaceAll("|", "\\|"),
  }));
}
