/**
 * What a bundle may carry (docs/design/agents.md#environments): agents, MCP configs and workflows — never
 * variables.yml, dotfiles or anything else in the folder — and the rules every member path obeys.
 * The same rules decide what `bundle create` packs and what `bundle install` accepts.
 */

/** Limits of a bundle, checked while it is read (nothing is written before all pass). */
export const BUNDLE_LIMITS = {
  /** The .tar.gz as sent. */
  maxCompressedBytes: 16 * 1024 * 1024,
  /** The tar stream once gunzipped (a gzip bomb stops here). */
  maxTotalBytes: 64 * 1024 * 1024,
  /** One member. */
  maxFileBytes: 4 * 1024 * 1024,
  /** Members, folders included. */
  maxEntries: 1000,
};

/** The manifest's name inside the archive. */
export const MANIFEST = "manifest.json";

const SEGMENT = /^[A-Za-z0-9_@+-][A-Za-z0-9_.@+ -]*$/;
const LAYOUT = [
  /^agents\/[^/]+\.prompt$/,
  /^mcp-configs\/[^/]+\.json$/,
  /^workflows\/[^/]+\.workflow\.(yaml|yml|json)$/,
  /^[^/]+\.json$/,
];

/** Why a member path is unsafe (absolute, `..`, odd characters), or undefined when it is a plain relative path. */
export function unsafeReason(path: string): string | undefined {
  if (path.startsWith("/") || /^[A-Za-z]:/.test(path)) return "an absolute path";
  if (path.includes("\\") || path.includes("\0")) return "a path with a backslash or NUL";
  const segments = path.split("/");
  if (segments.some((s) => s === "..")) return "a path that climbs out with `..`";
  if (segments.some((s) => s === "" || s === "." || !SEGMENT.test(s))) {
    return "a path with an empty, `.` or odd segment";
  }
  return undefined;
}

/** True for the files a bundle carries: agents/*.prompt, *.json and mcp-configs/*.json, workflows/*.workflow.*. */
export function bundledPath(path: string): boolean {
  return path !== MANIFEST && unsafeReason(path) === undefined && LAYOUT.some((re) => re.test(path));
}
