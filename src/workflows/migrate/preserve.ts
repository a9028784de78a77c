/**
 * Writes an edited YAML document back as its source text with only what the migration edited
 * rewritten: each node's state is remembered before the edits (snapshot), and afterwards the source is
 * patched at the source ranges of the nodes that differ — a changed scalar or key in place, a removed
 * entry's lines cut, an added entry inserted after its neighbour at the neighbour's indentation. Every
 * other byte (flow collections' spacing, comment alignment, quoting, blank lines) stays as written. A
 * change it cannot place (a reordered list, an entry added first) falls back to the library's own layout.
 */

import { isDeepStrictEqual } from "node:util";
import {
  Document,
  isCollection,
  isMap,
  isPair,
  isScalar,
  isSeq,
  type Node,
  Pair,
  Scalar,
  type ToStringOptions,
  YAMLMap,
  YAMLSeq,
} from "yaml";
import { parseYaml } from "../../lib/yaml.ts";

type Range = [number, number, number];

/** A node as it was before the edits. */
interface Before {
  value?: unknown;
  type?: string;
  comment?: string | null;
  items?: unknown[];
  flow?: boolean;
  key?: unknown;
  pairValue?: unknown;
  range?: Range | null;
}

/** Every node of a document as parsed, to tell afterwards what the edits changed. */
export interface Snapshot {
  root: unknown;
  before: WeakMap<object, Before>;
}

/** Remembers each node of a freshly parsed document (before any edit). */
export function snapshot(doc: Document): Snapshot {
  const before = new WeakMap<object, Before>();
  const visit = (n: unknown): void => {
    if (isScalar(n)) before.set(n, { value: n.value, type: n.type, comment: n.comment, range: n.range });
    else if (isCollection(n)) {
      before.set(n, { items: [...n.items], flow: n.flow, comment: n.comment, range: n.range });
      n.items.forEach(visit);
    } else if (isPair(n)) {
      before.set(n, { key: n.key, pairValue: n.value });
      visit(n.key);
      visit(n.value);
    }
  };
  visit(doc.contents);
  return { root: doc.contents, before };
}

/** A change this printer does not place; the whole document is then written in the library's layout. */
class Unplaceable extends Error {}

const OPTIONS: ToStringOptions = { lineWidth: 0, flowCollectionPadding: false };

/** The document's text: `source` with only the edited nodes rewritten (see the module doc). */
export function preservedText(doc: Document, source: string, snap: Snapshot): string {
  const dump = () => doc.toString({ lineWidth: 0 });
  if (doc.contents !== snap.root) return dump();
  const patches: Patch[] = [];
  try {
    new Printer(source, snap.before, patches).node(doc.contents, 0);
  } catch (err) {
    if (err instanceof Unplaceable) return dump();
    throw err;
  }
  const text = applyPatches(source, patches);
  // The patched text must hold exactly the edited data; anything else is this printer's mistake.
  const reparsed = parseYaml(text);
  if (reparsed.errors.length > 0 || !isDeepStrictEqual(reparsed.toJS(), doc.toJS())) return dump();
  return text;
}

interface Patch {
  from: number;
  to: number;
  text: string;
}

function applyPatches(source: string, patches: Patch[]): string {
  const sorted = patches.map((p, i) => ({ ...p, i })).sort((a, b) =>
    a.from - b.from || (a.to - a.from) - (b.to - b.from) || a.i - b.i
  );
  let out = "";
  let at = 0;
  for (const p of sorted) {
    if (p.from > at) out += source.slice(at, p.from);
    out += p.text;
    at = Math.max(at, p.to);
  }
  return out + source.slice(at);
}

/** A node written on its own, as the value after `key: ` (map) or `- ` (list), continuation lines at `col`. */
function render(node: unknown, col: number, inList: boolean): string {
  const doc = new Document();
  if (inList) {
    const seq = new YAMLSeq();
    seq.items.push(node);
    doc.contents = seq;
  } else {
    const map = new YAMLMap();
    map.items.push(new Pair(new Scalar("k"), node));
    doc.contents = map;
  }
  const text = doc.toString(OPTIONS).slice(inList ? 2 : 3);
  return indent(text, col, false);
}

/** Prefixes every line but (unless `first`) the first with `col` spaces. */
function indent(text: string, col: number, first: boolean): string {
  const pad = " ".repeat(col);
  return text.split("\n").map((l, i) => (l === "" || (i === 0 && !first) ? l : pad + l)).join("\n");
}

class Printer {
  constructor(
    readonly src: string,
    readonly before: WeakMap<object, Before>,
    readonly patches: Patch[],
  ) {}

  was(n: object): Before {
    const b = this.before.get(n);
    if (!b) throw new Unplaceable();
    return b;
  }

  lineStart(pos: number): number {
    return this.src.lastIndexOf("\n", pos - 1) + 1;
  }

  col(pos: number): number {
    return pos - this.lineStart(pos);
  }

  /** The position after the line holding the last character before `pos` (its newline included). */
  lineEnd(pos: number): number {
    let p = pos;
    while (p > 0 && /\s/.test(this.src[p - 1])) p--;
    const nl = this.src.indexOf("\n", p);
    if (nl < 0) throw new Unplaceable();
    return nl + 1;
  }

  /** Where an original node's written content ends (its trailing comment lines excluded). */
  contentEnd(n: unknown): number {
    if (isPair(n)) {
      const b = this.was(n);
      return this.contentEnd(b.pairValue ?? b.key);
    }
    const b = this.was(n as object);
    if (isCollection(n) && !b.flow && b.items!.length > 0) return this.contentEnd(b.items!.at(-1));
    if (!b.range) throw new Unplaceable();
    return b.range[1];
  }

  start(n: unknown): number {
    const r = (isPair(n) ? (n.key as Node) : (n as Node))?.range;
    if (!r) throw new Unplaceable();
    return r[0];
  }

  node(n: unknown, col: number): void {
    if (isScalar(n)) return this.scalar(n, col);
    if (!isCollection(n)) return;
    const b = this.was(n);
    if (b.flow || n.flow) {
      if (this.changed(n)) this.patchValue(n, b.range, { col, inList: !isMap(n), oldComment: b.comment });
      return;
    }
    const orig = b.items!;
    const kept = n.items.filter((i) => orig.includes(i));
    if (kept.some((k, i) => i > 0 && orig.indexOf(k) < orig.indexOf(kept[i - 1]))) throw new Unplaceable();
    const itemCol = orig.length > 0 ? this.itemCol(n, orig[0]) : -1;
    for (const [i, item] of orig.entries()) {
      if (!(n.items as unknown[]).includes(item)) this.remove(item, orig[i + 1]);
    }
    let insertAt = -1;
    for (const [i, item] of n.items.entries()) {
      if (orig.includes(item)) {
        insertAt = this.lineEnd(this.contentEnd(item));
        if (isPair(item)) this.pair(item);
        else this.node(item, this.col(this.start(item)));
        continue;
      }
      if (i === 0 || insertAt < 0 || itemCol < 0) throw new Unplaceable();
      const text = isSeq(n) ? "- " + render(item, 0, true) : renderPair(item as Pair);
      this.patches.push({ from: insertAt, to: insertAt, text: indent(text, itemCol, true) });
    }
  }

  /** The column a map's keys or a list's dashes start at. */
  itemCol(n: YAMLMap | YAMLSeq, first: unknown): number {
    const at = this.start(first);
    if (isMap(n)) return this.col(at);
    const dash = this.src.lastIndexOf("-", at);
    if (dash < this.lineStart(at)) throw new Unplaceable();
    return this.col(dash);
  }

  remove(item: unknown, next: unknown): void {
    let from = this.start(item);
    if (isSeq(item) || !isPair(item)) {
      const dash = this.src.lastIndexOf("-", from);
      if (dash >= this.lineStart(from)) from = dash;
    }
    const ls = this.lineStart(from);
    if (this.src.slice(ls, from).trim() === "") {
      this.patches.push({ from: ls, to: this.lineEnd(this.contentEnd(item)), text: "" });
    } else if (next !== undefined) {
      // The first entry on a `- ` line: the next entry moves up onto it.
      this.patches.push({ from, to: this.start(next), text: "" });
    } else throw new Unplaceable();
  }

  pair(p: Pair): void {
    const b = this.was(p);
    const keyAt = this.start(b.key);
    const col = this.col(keyAt);
    if (p.key !== b.key) {
      const old = b.key as Node;
      if (!isScalar(p.key) || !old.range) throw new Unplaceable();
      this.patches.push({ from: old.range[0], to: old.range[1], text: String(p.key.value) });
    }
    if (p.value === b.pairValue) return this.node(p.value, col);
    const old = b.pairValue as Node | null;
    if (isScalar(p.value) && isScalar(old) && old.range) {
      return this.patchValue(p.value, old.range, { col, oldComment: this.was(old).comment });
    }
    // A new value of another kind: the entry is written again where it was.
    const from = p.key === b.key ? keyAt : (b.key as Node).range![0];
    const end = this.lineEnd(this.contentEnd(p));
    this.patches.push({ from, to: end, text: indent(renderPair(p), col, false) });
  }

  scalar(n: Scalar, col: number): void {
    const b = this.was(n);
    if (b.value === n.value && b.type === n.type && b.comment === n.comment) return;
    this.patchValue(n, b.range ?? null, { col, oldComment: b.comment });
  }

  /** Writes a node in place of the source range of what was there. */
  patchValue(
    n: Node,
    range: Range | null | undefined,
    at: { col: number; inList?: boolean; oldComment?: string | null },
  ) {
    const { col, inList = false, oldComment } = at;
    if (!range) throw new Unplaceable();
    const was = this.src.slice(range[0], range[1]).trimEnd();
    // An unchanged trailing comment stays in the source after the value: render the value alone.
    const comment = n.comment;
    if (n.comment === oldComment && !was.includes("\n")) n.comment = undefined;
    const text = render(n, col, inList).trimEnd();
    n.comment = comment;
    if (!text.includes("\n") && !was.includes("\n")) {
      this.patches.push({ from: range[0], to: range[0] + was.length, text });
    } else this.patches.push({ from: range[0], to: this.lineEnd(range[1]), text: text + "\n" });
  }

  /** True when a node or anything below it differs from what was parsed. */
  changed(n: unknown): boolean {
    const b = this.before.get(n as object);
    if (!b) return true;
    if (isScalar(n)) return b.value !== n.value || b.type !== n.type || b.comment !== n.comment;
    if (isPair(n)) {
      return b.key !== n.key || b.pairValue !== n.value || this.changed(n.key) || this.changed(n.value);
    }
    if (isCollection(n)) {
      return b.items!.length !== n.items.length ||
        n.items.some((i, k) => i !== b.items![k] || this.changed(i));
    }
    return false;
  }
}

/** A map entry on its own (`key: value` and any lines below it). */
function renderPair(p: Pair): string {
  const doc = new Document();
  const map = new YAMLMap();
  map.items.push(p);
  doc.contents = map;
  return doc.toString(OPTIONS);
}
