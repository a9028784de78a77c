/** Levelled logging to stderr; stdout stays clean for command output (docs/design/errors.md#cli-output). */
export const LOG_LEVELS = ["debug", "info", "warn", "error", "silent"] as const;
export type LogLevel = typeof LOG_LEVELS[number];
/** `text` for people at a terminal, `json` (one object a line) for log collectors. */
export const LOG_FORMATS = ["text", "json"] as const;
export type LogFormat = typeof LOG_FORMATS[number];

let threshold = LOG_LEVELS.indexOf("info");
let format: LogFormat = "text";
/** Where lines go besides stderr (`stn serve`'s log file). */
const sinks = new Set<(line: string) => void>();
/** Fields every line logged inside a scope carries (the API request's id): src/log_scope.ts keeps them. */
let scopeFields: () => Record<string, unknown> | undefined = () => undefined;

/**
 * Reads the active span's trace id for each line. src/telemetry/tracing.ts hands it over when it loads with
 * tracing on (every span starts there): log.ts itself stays free of `@opentelemetry/api`, a CommonJS package
 * that would cost every CLI command ~20 ms to load (docs/benchmarks.md, startup).
 */
let activeTraceId: () => string | undefined = () => undefined;

/** Sets where log lines read the active span's trace id from (src/telemetry/tracing.ts). */
export function useTraceIds(read: () => string | undefined): void {
  activeTraceId = read;
}

/** Sets the lowest level that is printed. */
export function setLogLevel(level: LogLevel): void {
  threshold = LOG_LEVELS.indexOf(level);
}

/** Sets how lines are written. */
export function setLogFormat(f: LogFormat): void {
  format = f;
}

/** Sends every printed line to `write` too (e.g. a log file); returns the function that stops it. */
export function addLogSink(write: (line: string) => void): () => void {
  sinks.add(write);
  return () => sinks.delete(write);
}

function print(line: string): void {
  console.error(line);
  for (const write of sinks) write(line);
}

/** Whether a line at this level would be printed (to skip building costly fields). */
export function logEnabled(level: LogLevel): boolean {
  return LOG_LEVELS.indexOf(level) >= threshold;
}

/** Sets where log lines read their scope's fields from (src/log_scope.ts, when it loads). */
export function useScopeFields(read: () => Record<string, unknown> | undefined): void {
  scopeFields = read;
}

function emit(level: LogLevel, msg: string, fields?: Record<string, unknown>): void {
  if (LOG_LEVELS.indexOf(level) < threshold) return;
  const scoped = scopeFields();
  const traceId = activeTraceId();
  const all = scoped || traceId
    ? { ...scoped, ...fields, ...(traceId ? { trace_id: traceId } : {}) }
    : fields;
  const time = new Date().toISOString();
  if (format === "json") {
    print(JSON.stringify({ time, level, message: msg, ...all }));
    return;
  }
  const extra = all && Object.keys(all).length
    ? " " +
      Object.entries(all).map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`).join(" ")
    : "";
  print(`${time} ${level.padEnd(5)} ${msg}${extra}`);
}

/** The process-wide logger. */
export const log = {
  debug: (msg: string, fields?: Record<string, unknown>) => emit("debug", msg, fields),
  info: (msg: string, fields?: Record<string, unknown>) => emit("info", msg, fields),
  warn: (msg: string, fields?: Record<string, unknown>) => emit("warn", msg, fields),
  error: (msg: string, fields?: Record<string, unknown>) => emit("error", msg, fields),
};
