/**
 * POSIX path joining for modules every CLI command loads: node:path pulls in Deno's Node layer (its errors,
 * util and buffer modules), 5-40 ms of a command's start on this machine (docs/benchmarks.md, startup).
 * Same results as node:path's posix functions (tests/lib/path_test.ts compares them); stn runs on Linux
 * and macOS only (scripts/compile.ts targets).
 */

/** The path with `.` and `..` resolved and repeated slashes collapsed; a trailing slash is kept. */
export function normalize(path: string): string {
  if (path === "") return ".";
  const absolute = path.startsWith("/");
  const parts: string[] = [];
  for (const part of path.split("/")) {
    if (part === "" || part === ".") continue;
    if (part !== "..") parts.push(part);
    else if (parts.length && parts.at(-1) !== "..") parts.pop();
    else if (!absolute) parts.push("..");
  }
  let out = parts.join("/");
  if (!out && !absolute) out = ".";
  if (out && path.endsWith("/")) out += "/";
  return absolute ? `/${out}` : out;
}

/** The parts joined with `/`, normalized. */
export function join(...parts: string[]): string {
  const joined = parts.filter((p) => p !== "").join("/");
  return joined === "" ? "." : normalize(joined);
}

/** The absolute path the parts name, from the working directory; no trailing slash. */
export function resolve(...parts: string[]): string {
  let path = "";
  for (let i = parts.length - 1; i >= 0 && !path.startsWith("/"); i--) {
    if (parts[i] !== "") path = path ? `${parts[i]}/${path}` : parts[i];
  }
  if (!path.startsWith("/")) path = path ? `${Deno.cwd()}/${path}` : Deno.cwd();
  const out = normalize(path);
  return out.length > 1 && out.endsWith("/") ? out.slice(0, -1) : out;
}

/** Trailing slashes removed, keeping a lone `/`. */
function trimTrailing(path: string): string {
  let end = path.length;
  while (end > 1 && path[end - 1] === "/") end--;
  return path.slice(0, end);
}

/** The folder part of a path: `.` when it has none. */
export function dirname(path: string): string {
  if (path === "") return ".";
  const trimmed = trimTrailing(path);
  const slash = trimmed.lastIndexOf("/");
  if (slash < 0) return ".";
  if (slash === 0) return "/";
  return trimmed.slice(0, slash);
}

/** The last part of a path. */
export function basename(path: string): string {
  const trimmed = trimTrailing(path);
  return trimmed === "/" ? "" : trimmed.slice(trimmed.lastIndexOf("/") + 1);
}
