/**
 * The "Files" list of docs/architecture.md: every file of `src/`, by folder, with the first sentence of its
 * first doc comment — the file's purpose, so a file says what it is for at its top. `deno task docs` writes
 * it; tests/docs_design_test.ts checks it.
 */
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const SRC = fileURLToPath(new URL("../src", import.meta.url));

/** Every source file of src/ (`.ts`, `.tsx`), src-relative, sorted by folder, then name. */
export function sourceFiles(dir = SRC): string[] {
  return [...Deno.readDirSync(dir)].flatMap((e) => {
    const path = join(dir, e.name);
    return e.isDirectory ? sourceFiles(path) : /\.tsx?$/.test(e.name) ? [relative(SRC, path)] : [];
  }).sort((a, b) => dirname(a).localeCompare(dirname(b)) || a.localeCompare(b));
}

/** The first sentence of a file's first doc comment, on one line; undefined when it has none. */
export function purpose(text: string): string | undefined {
  const doc = /\/\*\*([\s\S]*?)\*\//.exec(text);
  if (!doc) return undefined;
  const body = doc[1].split("\n").map((l) => l.replace(/^\s*\*\s?/, "")).join(" ").replace(/\s+/g, " ")
    .trim();
  return /^(.+?(?<!\be\.g|\bi\.e|\betc)[.!?])(\s|$)/.exec(body)?.[1] ?? body;
}

/** Each src/ file with its purpose (undefined when it has no doc comment). */
export function filePurposes(): { file: string; purpose: string | undefined }[] {
  return sourceFiles().map((file) => ({ file, purpose: purpose(Deno.readTextFileSync(join(SRC, file))) }));
}

/** The list as docs/architecture.md holds it, wrapped as `deno fmt` wraps Markdown (one pass through it). */
export async function filesText(): Promise<string> {
  const fmt = new Deno.Command(Deno.execPath(), {
    args: ["fmt", "--ext", "md", "-"],
    cwd: fileURLToPath(new URL("..", import.meta.url)),
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const input = ReadableStream.from([new TextEncoder().encode(filesMarkdown() + "\n")]);
  const [out] = await Promise.all([fmt.output(), input.pipeTo(fmt.stdin)]);
  if (!out.success) throw new Error(`deno fmt failed: ${new TextDecoder().decode(out.stderr)}`);
  return new TextDecoder().decode(out.stdout).trimEnd();
}

/** The list before wrapping: a line per folder, then its files with their purposes. */
function filesMarkdown(): string {
  const lines: string[] = [];
  let folder: string | undefined;
  for (const { file, purpose } of filePurposes()) {
    const dir = dirname(file) === "." ? "src/" : `src/${dirname(file)}/`;
    if (dir !== folder) lines.push(...(folder === undefined ? [] : [""]), `**\`${dir}\`**`, "");
    folder = dir;
    lines.push(
      `- \`${file.slice(dir.length - 4)}\` — ${(purpose ?? "(no doc comment)").replaceAll("|", "\\|")}`,
    );
  }
  return lines.join("\n");
}
