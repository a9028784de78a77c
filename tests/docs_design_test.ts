/**
 * References between the repository's own texts resolve: a comment, a test, a script or a page that names
 * a document (`docs/design/durability.md#modes`) or a source file (`engine/core.ts`) names one that exists,
 * and a `#section` it names is a heading of that document. The design lives in docs/design/, inside the
 * repository; nothing may point at a document outside it (the old `DESIGN §4` style included).
 */
import { fileURLToPath } from "node:url";
import { basename, dirname, join, relative } from "node:path";
import { assertEquals } from "./helpers/assert.ts";
import { filePurposes, filesText } from "../scripts/layout.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
/** This test names missing documents on purpose (its own cases), so it is not scanned. */
const THIS_FILE = relative(ROOT, fileURLToPath(import.meta.url));

function walk(dir: string): string[] {
  return [...Deno.readDirSync(join(ROOT, dir))].flatMap((e) => {
    if (e.name.startsWith(".") || e.name === "node_modules") return [];
    const path = join(dir, e.name);
    return e.isDirectory ? walk(path) : [path];
  });
}

/** Every file of the checkout (outside dot-folders), root-relative. */
const FILES = [...Deno.readDirSync(ROOT)].flatMap((e) =>
  e.name.startsWith(".") ? [] : e.isDirectory ? walk(e.name) : [e.name]
);
const EXISTS = new Set([...FILES, ...FILES.flatMap((f) => ancestors(dirname(f)))]);
const BASENAMES = new Set(FILES.map((f) => basename(f)));
const TEXT = /\.(ts|tsx|js|css|c|h|md|json|yaml|yml|sh)$|^scripts\/[^./]+$/;
/** The texts whose references are checked. */
const SCANNED = FILES.filter((f) =>
  /^(src|tests|scripts|docs|examples)\/|^[A-Z]+\.md$/.test(f) && TEXT.test(f) && f !== THIS_FILE
);

function ancestors(dir: string): string[] {
  return dir === "." || dir === "" ? [] : [dir, ...ancestors(dirname(dir))];
}

/** A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces as hyphens. */
export function slug(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, "").replace(/\s/g, "-");
}

const anchorCache = new Map<string, Set<string>>();
/** The anchors of a Markdown document's headings (outside fenced code). */
function anchors(doc: string): Set<string> {
  let set = anchorCache.get(doc);
  if (!set) {
    const text = Deno.readTextFileSync(join(ROOT, doc)).replace(/^```[\s\S]*?^```/gm, "");
    set = new Set([...text.matchAll(/^#{1,6}\s+(.+?)\s*#*$/gm)].map((m) => slug(m[1])));
    anchorCache.set(doc, set);
  }
  return set;
}

/** The root-relative path `ref` names from `file`: from the file's folder or one above it, or from the root. */
function resolve(file: string, ref: string): string | undefined {
  const bases = [dirname(file), ...ancestors(dirname(dirname(file))), "."];
  for (const base of bases) {
    const path = relative(ROOT, join(ROOT, base, ref));
    if (EXISTS.has(path.replace(/\/$/, ""))) return path;
  }
  return undefined;
}

/** What is wrong with the references of one text: each as `file: reference — why`. */
function problems(file: string, text = Deno.readTextFileSync(join(ROOT, file))): string[] {
  const md = file.endsWith(".md");
  const comments = md ? text : [...text.matchAll(/\/\*[\s\S]*?\*\/|\/\/[^\n]*/g)].map((m) => m[0]).join("\n");
  const found: string[] = [];
  if (text.includes("§")) found.push(`${file}: "§" — name a section as <document>.md#<anchor>`);
  // A Markdown document named with its folder anywhere, or by its bare name in a comment or a page (in code,
  // a bare `notes.md` is a test's fixture more often than a reference).
  const docRefs = /(?<![\w\/.@-])((?:\.{1,2}\/)*(?:[\w-]+\/)*[\w.-]+\.md)(#[\w-]+)?(?![\w\/-])/g;
  const refs = [...text.matchAll(docRefs)].filter((m) => m[1].includes("/"))
    .concat([...comments.matchAll(docRefs)].filter((m) => !m[1].includes("/")));
  for (const [, ref, anchor] of refs) {
    const path = resolve(file, ref);
    if (!path) found.push(`${file}: ${ref} — no such document in the repository`);
    else if (anchor && !anchors(path).has(anchor.slice(1))) {
      found.push(`${file}: ${ref}${anchor} — ${path} has no heading with that anchor`);
    }
  }
  if (md) {
    for (const [, anchor] of text.matchAll(/\]\(#([\w-]+)\)/g)) {
      if (!anchors(file).has(anchor)) found.push(`${file}: #${anchor} — no heading with that anchor here`);
    }
    return found;
  }
  // A source file named in a comment of code (`core.ts`, `engine/claims.ts`): by its name, or by the end of
  // its path.
  if (!/\.(ts|tsx|c|h)$/.test(file)) return found;
  for (const [, ref] of comments.matchAll(/(?<![\w\/.@:-])((?:[\w-]+\/)*[\w-]+\.(?:tsx?|c|h))(?![\w\/-])/g)) {
    const known = ref.includes("/")
      ? resolve(file, ref) !== undefined || FILES.some((f) => f.endsWith(`/${ref}`))
      : BASENAMES.has(ref);
    if (!known && !PLACEHOLDERS.has(ref)) found.push(`${file}: ${ref} — no such source file`);
  }
  return found;
}

/** File names comments use as patterns, not as references. */
const PLACEHOLDERS = new Set(["NNNN_name.ts"]);

Deno.test("docs: every document, section and source file a comment, test, script or page names exists", () => {
  assertEquals(SCANNED.flatMap((f) => problems(f)), []);
});

Deno.test("docs: the reference check catches a missing document, a missing section and the old § style", () => {
  const file = "src/workflows/engine/example.ts";
  const text =
    "/** See docs/design/durability.md#modes, docs/design/durability.md#no-such-section, DESIGN §4,\n" +
    " * shared/spec/workflows.md, PROTOCOL.md, core.ts, engine/claims.ts, src/ui/guard.ts and no_such_file.ts. */\n";
  assertEquals(problems(file, text), [
    `${file}: "§" — name a section as <document>.md#<anchor>`,
    `${file}: docs/design/durability.md#no-such-section — docs/design/durability.md has no heading with that anchor`,
    `${file}: shared/spec/workflows.md — no such document in the repository`,
    `${file}: PROTOCOL.md — no such document in the repository`,
    `${file}: src/ui/guard.ts — no such source file`,
    `${file}: no_such_file.ts — no such source file`,
  ]);
});

Deno.test("docs: section anchors are made as GitHub makes them", () => {
  assertEquals(slug("The API's error body"), "the-apis-error-body");
  assertEquals(slug("`stn serve --no-local-workers`"), "stn-serve---no-local-workers");
  assertEquals(slug("The sandbox channel protocol (v1)"), "the-sandbox-channel-protocol-v1");
});

/** The text of docs/architecture.md between two markers. */
function section(page: string, start: string, end: string): string {
  return page.slice(page.indexOf(start) + start.length, page.indexOf(end)).trim();
}

Deno.test("docs: every file of src/ has a doc comment, whose first sentence is its purpose", () => {
  assertEquals(filePurposes().filter((f) => !f.purpose).map((f) => f.file), []);
});

Deno.test("docs: the file list in architecture.md is the one of src/ (deno task docs)", async () => {
  const page = Deno.readTextFileSync(join(ROOT, "docs/architecture.md"));
  assertEquals(section(page, "<!-- files:start -->", "<!-- files:end -->"), await filesText());
});

Deno.test("docs: architecture.md's layout names every folder and top-level file of src/", () => {
  const page = Deno.readTextFileSync(join(ROOT, "docs/architecture.md"));
  const layout = section(page, "## Layout", "## Who imports whom");
  const parts = FILES.filter((f) => f.startsWith("src/")).flatMap((f) => [
    ...ancestors(dirname(f)).map((d) => `${d}/`),
    ...(dirname(f) === "src" ? [f] : []),
  ]);
  assertEquals([...new Set(parts)].filter((p) => !layout.includes(p)).sort(), []);
});
