/** `--watch` for list commands: redraw on a terminal, append what changed otherwise, until Ctrl-C. */

import type { Command } from "./command.ts";
import { jsonMode } from "./context.ts";
import { outStyle, render, renderLine, table } from "./output.ts";
import { moreNote } from "./paging.ts";

/** What a watched list shows: its items, each one's key, and its table row. */
export interface WatchView<T> {
  json: boolean;
  /** Reads the list as it is now. */
  read(): Promise<T[]>;
  key(item: T): string;
  header: string[];
  row(item: T): string[];
}

/** How often a watched list is read again. The API has no list stream, so this is a calm poll, not a tight one. */
const INTERVAL_MS = 2000;

/** Adds --watch to a list command. */
export function watchFlag(cmd: Command): Command {
  return cmd.option(
    "--watch",
    "keep the list up to date until Ctrl-C: redrawn on a terminal, else one line per new or changed item",
  );
}

/** Resolves after ms, or at once when the signal aborts. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    }, { once: true });
  });
}

/**
 * Shows the list, then reads it again every 2 s until Ctrl-C (which ends the command with exit 0). On a
 * terminal the table is redrawn in place; piped, the header comes once and then a line for each item that
 * is new or whose row changed (with --json one JSON object per line, NDJSON), so `| grep failed` works.
 */
export async function watchList<T>(view: WatchView<T>): Promise<void> {
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  Deno.addSignalListener("SIGINT", onSignal);
  const redraw = !view.json && Deno.stdout.isTerminal();
  const seen = new Map<string, string>();
  try {
    if (!redraw && !view.json) console.log(view.header.join("  "));
    while (!stop.signal.aborted) {
      const items = await view.read();
      if (redraw) {
        const lines = table(view.header, items.map(view.row));
        const when = new Date().toISOString().slice(11, 19);
        console.log(
          `\x1b[H\x1b[2J${lines.join("\n")}\n${outStyle.dim(`${when} · every 2s · Ctrl-C to stop`)}`,
        );
      } else {
        for (const item of items) {
          const row = view.row(item);
          const text = row.join("  ");
          if (seen.get(view.key(item)) === text) continue;
          seen.set(view.key(item), text);
          renderLine(item, { json: view.json, text: () => text });
        }
      }
      await pause(INTERVAL_MS, stop.signal);
    }
  } finally {
    Deno.removeSignalListener("SIGINT", onSignal);
  }
}

/** A list of runs as `workflow runs` and `agent runs` show it. */
export interface RunList<T> {
  /** --watch was given. */
  watch?: boolean;
  /** Reads the page (or pages) the paging flags ask for. */
  read(): Promise<{ runs: T[]; next_cursor: string | null }>;
  header: string[];
  row(run: T): string[];
}

/** Shows a list of runs once (a table with the paging note, or the page as JSON), or watches it with --watch. */
export async function showRuns<T extends { run_id: string }>(cmd: Command, list: RunList<T>): Promise<void> {
  const json = jsonMode(cmd);
  if (list.watch) {
    const read = async () => (await list.read()).runs;
    return await watchList({ json, read, key: (r) => r.run_id, header: list.header, row: list.row });
  }
  render(await list.read(), {
    json,
    text: (p) => {
      moreNote(p.next_cursor);
      return table(list.header, p.runs.map(list.row));
    },
  });
}
