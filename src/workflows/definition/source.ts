import { idFromFileName } from "./file_name.ts";
import { type Document, isMap, isPair, isScalar, isSeq, LineCounter, type Node } from "yaml";
import { parseYaml, yamlData, YamlLimitError } from "../../lib/yaml.ts";
import { errorMessage } from "../../errors.ts";

/**
 * A parsed definition file that still knows where each value came from, so validation issues can
 * name `line:column`. JSON is parsed by the YAML parser too (JSON is YAML), which gives JSON files
 * positions for free.
 */

/** A 1-based line and column in the source text. */
export interface Position {
  line: number;
  column: number;
}

/** The parsed value and a way to find a JSON-pointer path's position in the text. */
export interface ParsedSource {
  value: unknown;
  /**
   * Position of `path` (for a missing key: its nearest existing parent). By default a map entry is
   * located at its key; with `value`, a scalar at its value, moved `offset` characters into it when it
   * is a one-line plain or quoted scalar (so an expression error points at the bad token).
   */
  locate(
    path: readonly (string | number)[],
    options?: { value?: boolean; offset?: number },
  ): Position | undefined;
}

/** A syntax error in the file itself, or a limit it passes (`code` then says which; else parse_error). */
export interface SourceError {
  message: string;
  position?: Position;
  code?: "parse_error" | "too_many_aliases" | "too_deep" | "document_too_large";
  hint?: string;
}

/** The document as plain data, or the reason it cannot be (an unknown alias, a limit of src/lib/yaml.ts). */
function toValue(doc: Document): { value: unknown } | { error: SourceError } {
  try {
    return { value: yamlData(doc) };
  } catch (err) {
    if (err instanceof YamlLimitError) {
      const message = err.code === "too_deep" ? err.message.replace("the document", "the file") : err.message;
      return { error: { code: err.code, message, hint: err.hint } };
    }
    // An alias before its anchor ("states: *a" with no &a) and the like: a YAML error like any other.
    return { error: { code: "parse_error", message: errorMessage(err).split("\n")[0] } };
  }
}

/** Parses YAML or JSON text, keeping positions; returns the syntax error instead when there is one. */
export function parseSource(text: string): ParsedSource | { error: SourceError } {
  const lineCounter = new LineCounter();
  const doc = parseYaml(text, { lineCounter, uniqueKeys: true, prettyErrors: false });
  if (doc.errors.length > 0) {
    const e = doc.errors[0];
    const pos = e.linePos?.[0] ?? (e.pos?.[0] !== undefined ? lineCounter.linePos(e.pos[0]) : undefined);
    return {
      error: {
        message: e.message.split("\n")[0],
        position: pos ? { line: pos.line, column: pos.col } : undefined,
      },
    };
  }
  const at = (offset: number | undefined): Position | undefined => {
    if (offset === undefined) return undefined;
    const p = lineCounter.linePos(offset);
    return { line: p.line, column: p.col };
  };
  const converted = toValue(doc);
  if ("error" in converted) return converted;
  return {
    value: converted.value,
    locate(path, options = {}) {
      let node: unknown = doc.contents;
      let best: number | undefined = (node as Node | null)?.range?.[0];
      for (const seg of path) {
        if (isMap(node)) {
          const pair = node.items.find((p) =>
            isPair(p) && isScalar(p.key) && String(p.key.value) === String(seg)
          );
          if (!pair) return at(best);
          // A key's own line is where an editor should point for the field, and its value's for a value.
          best = (pair.key as Node).range?.[0] ?? best;
          node = pair.value;
        } else if (isSeq(node) && typeof seg === "number" || isSeq(node) && /^\d+$/.test(String(seg))) {
          const item = (node as { items: unknown[] }).items[Number(seg)];
          if (!item) return at(best);
          best = (item as Node).range?.[0] ?? best;
          node = item;
        } else {
          return at(best);
        }
      }
      if (options.value && isScalar(node) && node.range) {
        const [start, valueEnd] = node.range;
        const oneLine = !text.slice(start, valueEnd).includes("\n");
        const plain = node.type === "PLAIN" || node.type === "QUOTE_SINGLE" || node.type === "QUOTE_DOUBLE";
        const shift = oneLine && plain && options.offset
          ? options.offset + (node.type === "PLAIN" ? 0 : 1)
          : 0;
        return at(Math.min(start + shift, Math.max(start, valueEnd - 1)));
      }
      return at(best);
    },
  };
}

/** Splits a JSON pointer ("/states/3/next") into its segments. */
export function pointerSegments(pointer: string): string[] {
  if (pointer === "" || pointer === "/") return [];
  return pointer.slice(1).split("/").map((s) => s.replaceAll("~1", "/").replaceAll("~0", "~"));
}

/** Builds a JSON pointer from segments. */
export function toPointer(segments: readonly (string | number)[]): string {
  return segments.map((s) => "/" + String(s).replaceAll("~", "~0").replaceAll("/", "~1")).join("");
}

/** The id a definition file claims (`id`, or Station's `workflowId`), else the one its name implies: valid or not. */
export function claimedWorkflowId(text: string, file: string): string | undefined {
  const parsed = parseSource(text);
  if (!("error" in parsed)) {
    const v = parsed.value as Record<string, unknown> | null;
    if (v && typeof v === "object" && typeof v.id === "string") return v.id;
    if (v && typeof v === "object" && typeof v.workflowId === "string") return v.workflowId;
  }
  return idFromFileName(file);
}
