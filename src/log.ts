/** Levelled logging to stderr; stdout stays clean for command output (DESIGN §6). */
export const LOG_LEVELS = ["debug", "info", "warn", "error", "silent"] as const;
export type LogLevel = typeof LOG_LEVELS[number];

let threshold = LOG_LEVELS.indexOf("info");

/** Sets the lowest level that is printed. */
export function setLogLevel(level: LogLevel): void {
  threshold = LOG_LEVELS.indexOf(level);
}

function emit(level: LogLevel, msg: string, fields?: Record<string, unknown>): void {
  if (LOG_LEVELS.indexOf(level) < threshold) return;
  const extra = fields && Object.keys(fields).length
    ? " " +
      Object.entries(fields).map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`).join(
        " ",
      )
    : "";
  console.error(`${new Date().toISOString()} ${level.padEnd(5)} ${msg}${extra}`);
}

/** The process-wide logger. */
export const log = {
  debug: (msg: string, fields?: Record<string, unknown>) => emit("debug", msg, fields),
  info: (msg: string, fields?: Record<string, unknown>) => emit("info", msg, fields),
  warn: (msg: string, fields?: Record<string, unknown>) => emit("warn", msg, fields),
  error: (msg: string, fields?: Record<string, unknown>) => emit("error", msg, fields),
};
