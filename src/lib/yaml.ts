import {
  type CreateNodeOptions,
  type Document,
  type DocumentOptions,
  isAlias,
  isCollection,
  isPair,
  isScalar,
  type Node,
  parseDocument,
  type ParseOptions,
  type SchemaOptions,
  stringify,
  type ToJSOptions,
} from "yaml";
import { MAX_NESTING, nestsDeeperThan } from "./nesting.ts";
import { errorMessage } from "../errors.ts";

/**
 * The one way stn reads YAML a user wrote (workflow definitions, agents' front matter, MCP configs,
 * config.yaml, variables.yml, files to migrate): `parseYaml` for the document, `yamlData` for its data
 * within bounds. Aliases (`*name`) repeat what an anchor (`&name`) holds without the text growing, so a
 * small document can stand for a huge one: "billion laughs" nests them (bounded by the alias count), and
 * one big anchored string repeated 99 times passes any alias count (3.5 MB became 350 MB). So the data's
 * size with every alias expanded is computed on the document, without building it, before it is built.
 */

/** Alias expansions allowed in one document: enough for YAML's anchors as people use them, not for a bomb. */
export const MAX_ALIAS_COUNT = 100;

/** The size (about the bytes of its JSON) a document's data may reach in any case, aliases expanded. */
export const MIN_EXPANDED_BYTES = 1024 * 1024;

/** How many times its own size a document's data may grow by expanding its aliases (past the minimum). */
export const EXPANSION_FACTOR = 2;

/** A document whose data passes a limit: `code` says which, `hint` what to do. */
export class YamlLimitError extends Error {
  constructor(
    readonly code: "too_many_aliases" | "document_too_large" | "too_deep",
    message: string,
    readonly hint: string,
  ) {
    super(message);
  }
}

/** Parses YAML (or JSON) text into its document; syntax errors are in `doc.errors`. Read data with yamlData. */
export function parseYaml(
  text: string,
  options?: ParseOptions & DocumentOptions & SchemaOptions,
): Document.Parsed {
  return parseDocument(text, options);
}

interface Size {
  /** As written: an alias counts as its own few characters. */
  written: number;
  /** With every alias replaced by what its anchor holds. */
  expanded: number;
  /** Levels of maps/lists below and including this node, aliases expanded. */
  height: number;
}

const tooDeep = () =>
  new YamlLimitError(
    "too_deep",
    `the document nests maps or lists deeper than ${MAX_NESTING} levels`,
    `flatten the data: at most ${MAX_NESTING} levels of nesting are accepted`,
  );

/** The written and expanded sizes of a document, in one walk that follows anchors in document order. */
function sizeOf(doc: Document): Size {
  const anchors = new Map<string, unknown>();
  const done = new Map<unknown, Size>();
  const walk = (node: unknown, depth: number): Size => {
    if (node === null || node === undefined) return { written: 4, expanded: 4, height: 0 };
    const anchor = (node as { anchor?: string }).anchor;
    // The anchor counts from its node on, its own aliases inside included (YAML's "last anchor before").
    if (anchor) anchors.set(anchor, node);
    let size: Size;
    if (isAlias(node)) {
      const target = anchors.get(node.source);
      if (target === undefined) return { written: node.source.length + 1, expanded: 0, height: 0 };
      const of = done.get(target);
      // An alias inside what its anchor holds repeats it without end.
      if (!of) throw tooDeep();
      if (depth + of.height > MAX_NESTING) throw tooDeep();
      return { written: node.source.length + 1, expanded: of.expanded, height: of.height };
    } else if (isScalar(node)) {
      const v = node.value;
      const n = typeof v === "string" ? v.length + 2 : String(v).length;
      size = { written: n, expanded: n, height: 0 };
    } else if (isPair(node)) {
      const k = walk(node.key, depth);
      const v = walk(node.value, depth);
      size = {
        written: k.written + v.written + 2,
        expanded: k.expanded + v.expanded + 2,
        height: Math.max(k.height, v.height),
      };
    } else if (isCollection(node)) {
      if (depth + 1 > MAX_NESTING) throw tooDeep();
      size = { written: 2, expanded: 2, height: 0 };
      for (const item of node.items) {
        const s = walk(item, depth + 1);
        size.written += s.written + 1;
        size.expanded += s.expanded + 1;
        size.height = Math.max(size.height, s.height);
      }
      size.height += 1;
    } else {
      size = { written: 0, expanded: 0, height: 0 };
    }
    done.set(node, size);
    return size;
  };
  return walk(doc.contents as Node | null, 0);
}

/**
 * The document's data as plain values, refused with a YamlLimitError when it expands aliases too often,
 * grows past EXPANSION_FACTOR × its written size (at least MIN_EXPANDED_BYTES) by expanding them, or nests
 * deeper than MAX_NESTING. Errors of YAML itself (an alias before its anchor) are thrown as they are.
 */
export function yamlData(doc: Document, options: ToJSOptions & CreateNodeOptions = {}): unknown {
  const size = sizeOf(doc);
  const limit = Math.max(MIN_EXPANDED_BYTES, EXPANSION_FACTOR * size.written);
  if (size.expanded > limit) {
    throw new YamlLimitError(
      "document_too_large",
      `the document's aliases (*name) expand it to about ${mib(size.expanded)}, over its limit of ${
        mib(limit)
      } (${EXPANSION_FACTOR}× its own size, at least ${mib(MIN_EXPANDED_BYTES)})`,
      "write the repeated values out, or repeat large values less often",
    );
  }
  let value: unknown;
  try {
    value = doc.toJS({ ...options, maxAliasCount: MAX_ALIAS_COUNT });
  } catch (err) {
    if (/excessive alias count/i.test(errorMessage(err))) {
      throw new YamlLimitError(
        "too_many_aliases",
        `the document expands YAML aliases (*name) too often (the limit is ${MAX_ALIAS_COUNT})`,
        "write the repeated values out, or reference them less often",
      );
    }
    throw err;
  }
  if (nestsDeeperThan(value)) throw tooDeep();
  return value;
}

const mib = (bytes: number) => `${(bytes / (1024 * 1024)).toFixed(bytes < 1024 * 1024 ? 2 : 1)} MiB`;

/** A value as YAML text (what `-o yaml` and `--definition` print). */
export function yamlText(value: unknown): string {
  return stringify(value);
}
