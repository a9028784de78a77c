/**
 * What a command that only talks to a running server reads of the config: the log level and format, and the
 * API token. Resolving the whole config builds its schema and, with a config file, loads the YAML reader
 * (~25 ms of a ~70 ms client command, docs/benchmarks.md); these three keys need neither. Anything this cannot
 * settle with certainty gives null, and the caller resolves the whole config as before (its errors included).
 */

import { LOG_FORMATS, LOG_LEVELS, type LogFormat, type LogLevel } from "../log.ts";
import { configFileOf, resolveHome, type StationPaths, stationPaths } from "./paths.ts";

/** The characters a bearer token may hold (RFC 6750): Hono's bearer auth refuses any other. */
export const API_TOKEN_PATTERN = /^[A-Za-z0-9._~+/-]+=*$/;
/** The shortest API token stn accepts. */
export const API_TOKEN_MIN_LENGTH = 16;

/** The config a client command uses. */
export interface ClientSettings {
  paths: StationPaths;
  log: { level: LogLevel; format: LogFormat };
  /** server.api_token, when the environment or config.yaml sets it. */
  apiToken?: string;
}

// A config file in whose text none of these words appears cannot set the log level or format or the token
// (Station's `debug: true` is its log level) nor make their sections invalid: it need not be parsed.
const CLIENT_KEY_WORDS = /log|server|level|format|api_token|debug/;

const fromEnv = (env: Record<string, string | undefined>, ...names: string[]) =>
  names.map((n) => env[n]).find((v) => v !== undefined && v !== "");

/**
 * The client settings from defaults, the config file and the environment, or null when they cannot be had
 * without the whole config: a file this does not read (see simpleYaml), a value that is not valid, or a
 * missing `--config` file. The whole config then says what is wrong, as it always did.
 */
export function clientSettings(
  configPath: string | undefined,
  env: Record<string, string | undefined> = Deno.env.toObject(),
): ClientSettings | null {
  const paths = stationPaths(resolveHome(env));
  let text: string;
  try {
    text = Deno.readTextFileSync(configPath ?? configFileOf(paths.home));
  } catch (err) {
    if (configPath !== undefined || !(err instanceof Deno.errors.NotFound)) return null;
    text = "";
  }
  const file = CLIENT_KEY_WORDS.test(text) ? simpleYaml(text) : new Map<string, string | null>();
  // A section given as a scalar, and Station's `debug`, are for the whole config to judge.
  if (!file || ["debug", "log", "server"].some((k) => file.has(k))) return null;
  const [fileLevel, fileFormat, fileToken] = ["log.level", "log.format", "server.api_token"].map((k) =>
    file.get(k)
  );
  if ([fileLevel, fileFormat, fileToken].includes(null)) return null; // not a string
  const level = fromEnv(env, "STN_LOG_LEVEL") ?? fileLevel ?? "info";
  const format = fromEnv(env, "STN_LOG_FORMAT") ?? fileFormat ?? "text";
  const apiToken = fromEnv(env, "STN_SERVER_API_TOKEN", "STATION_API_TOKEN") ?? fileToken ?? undefined;
  if (!isOneOf(level, LOG_LEVELS) || !isOneOf(format, LOG_FORMATS)) return null;
  if (
    apiToken !== undefined && (apiToken.length < API_TOKEN_MIN_LENGTH || !API_TOKEN_PATTERN.test(apiToken))
  ) {
    return null;
  }
  return { paths, log: { level, format }, ...(apiToken ? { apiToken } : {}) };
}

// One line of block YAML: indentation, a key, and maybe a scalar, then maybe a comment. The scalar is plain
// (words of safe characters, none ending in a colon, one space apart: no flow or block markers, no `: ` or
// ` #`), single-quoted (`''` is a quote) or double-quoted without escapes; quoted ones are always strings.
const WORD = "[A-Za-z0-9_./:@+~=-]+(?<!:)";
const LINE = new RegExp(
  `^( *)([A-Za-z_][A-Za-z0-9_-]*):(?: +(?:((?=[A-Za-z0-9_./])${WORD}(?: +${WORD})*)` +
    `|'((?:[^'\\x00-\\x1f\\x7f]|'')*)'|"([^"\\\\\\x00-\\x1f\\x7f]*)"))? *(?: #.*)?$`,
);
// Plain scalars that YAML 1.2 reads as null, a boolean or a number, not a string.
const NOT_A_STRING =
  /^(?:null|Null|NULL|~|true|True|TRUE|false|False|FALSE|[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|0o[0-7]+|0x[0-9a-fA-F]+|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$/;

/**
 * A config file's scalars by dotted path when it is plain block YAML: nested keys, each with a scalar (plain,
 * or quoted without escapes) or a block of keys one indentation deeper, comments and blank lines. A scalar
 * YAML reads as a string is that string; any other (a number, a boolean, null) is null here. Anything else
 * (escapes, lists, flow style, anchors, an empty key, a key twice, uneven indentation) gives null: only the
 * YAML reader may judge.
 */
export function simpleYaml(text: string): Map<string, string | null> | null {
  const values = new Map<string, string | null>();
  const seen = new Set<string>();
  // The keys whose blocks are open, innermost last, with their children's indentation once one was seen.
  const open: { indent: number; path: string; children?: number }[] = [];
  for (const raw of text.split("\n")) {
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (/^ *(#.*)?$/.test(line)) continue;
    const m = LINE.exec(line);
    if (!m) return null;
    const [, { length: indent }, key, plain, single, double] = m;
    while (open.length && open.at(-1)!.indent >= indent) {
      if (open.pop()!.children === undefined) return null; // `key:` with nothing under it is null
    }
    const parent = open.at(-1);
    if ((parent?.children ?? (parent ? indent : 0)) !== indent || (parent && indent <= parent.indent)) {
      return null;
    }
    if (parent) parent.children = indent;
    const path = parent ? `${parent.path}.${key}` : key;
    if (seen.has(path)) return null;
    seen.add(path);
    if (plain !== undefined) values.set(path, NOT_A_STRING.test(plain) ? null : plain);
    else if (single !== undefined) values.set(path, single.replaceAll("''", "'"));
    else if (double !== undefined) values.set(path, double);
    else open.push({ indent, path });
  }
  return open.every((o) => o.children !== undefined) ? values : null;
}

function isOneOf<T extends string>(value: string, values: readonly T[]): value is T {
  return (values as readonly string[]).includes(value);
}
