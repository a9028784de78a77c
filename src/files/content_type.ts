import { getMimeType, mimes } from "hono/utils/mime";

// The data and code files stn stores that Hono's web-oriented table lacks, or reads otherwise (.ts is
// MPEG transport stream there, a TypeScript file here).
const DATA_TYPES: Record<string, string> = {
  tsv: "text/tab-separated-values",
  log: "text/plain",
  md: "text/markdown",
  ts: "text/plain",
  py: "text/x-python",
  sh: "text/x-shellscript",
  jsonl: "application/jsonl",
  ndjson: "application/x-ndjson",
  yaml: "application/yaml",
  yml: "application/yaml",
  toml: "application/toml",
  tgz: "application/gzip",
  tar: "application/x-tar",
  parquet: "application/vnd.apache.parquet",
  wav: "audio/wav",
};
const TYPES = { ...mimes, ...DATA_TYPES };

/** The usual media type for a file name's extension (no charset); application/octet-stream when unknown. */
export function contentTypeFor(name: string): string {
  const base = name.slice(name.lastIndexOf("/") + 1);
  // A dotfile (".env") has no extension.
  if (base.lastIndexOf(".") <= 0) return "application/octet-stream";
  return getMimeType(base, TYPES)?.split(";")[0] ?? "application/octet-stream";
}
