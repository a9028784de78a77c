/** --limit, --cursor and --all for list commands whose API pages (docs/cli.md). */

import type { Command } from "./command.ts";
import { usageError } from "../errors.ts";
import { note } from "./output.ts";

/** The flags of a list that pages (docs/cli.md "Paging"). */
export interface PageFlags {
  limit: string;
  cursor?: string;
  all?: boolean;
}

/** A page as the API returns it and `--json` prints it: the items under the resource's name, and the cursor. */
export type Page<K extends string, T> = { [k in K]: T[] } & { next_cursor: string | null };

/** Adds --limit, --cursor and --all to a list command whose API pages. */
export function pageFlags(cmd: Command, defaultLimit: number): Command {
  return cmd
    .option("--limit <n>", "items per page", String(defaultLimit))
    .option("--cursor <cursor>", "start at this page (the next_cursor a previous page printed)")
    .option("--all", "follow next_cursor to the end and print every item");
}

/** Reads the page --cursor names, or with --all every page from there on, joined into one. */
export async function readPages<K extends string, T>(
  flags: PageFlags,
  key: K,
  fetchPage: (cursor: string | undefined, limit: number) => Promise<Page<K, T>>,
): Promise<Page<K, T>> {
  if (!/^[1-9]\d*$/.test(flags.limit)) {
    throw usageError(
      "invalid_limit",
      `--limit must be a whole number ≥ 1, got ${JSON.stringify(flags.limit)}`,
    );
  }
  const limit = Number(flags.limit);
  let page = await fetchPage(flags.cursor, limit);
  if (!flags.all) return page;
  const items = [...page[key]];
  while (page.next_cursor) {
    page = await fetchPage(page.next_cursor, limit);
    items.push(...page[key]);
  }
  return { [key]: items, next_cursor: null } as Page<K, T>;
}

/** Tells people on stderr how to get the next page, when there is one. */
export function moreNote(nextCursor: string | null): void {
  if (nextCursor) note((s) => s.dim(`more: --cursor ${nextCursor} for the next page, or --all`));
}
