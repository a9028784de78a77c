/** `stn events send|list` and `stn workflow signal`: events to everyone, signals to one run. */

import type { Command } from "./command.ts";
import type { EventRecord } from "../contract/events.ts";
import { errorMessage, usageError } from "../errors.ts";
import { jsonMode, withStation } from "./context.ts";
import { readLocalText } from "./local_files.ts";
import { fields, render, table } from "./output.ts";
import { moreNote, pageFlags, readPages } from "./paging.ts";
import { lazyImport } from "../lib/lazy_import.ts";

// The events' client and contract load when an events command runs, not for every command of the
// `workflow` group (docs/benchmarks.md, client commands).
const eventsClient = () =>
  lazyImport<typeof import("../client/events.ts")>("../client/events.ts", import.meta.url);

/** Reads --data: inline JSON, `@file`, or `-` for stdin (any JSON value). */
async function readData(raw: string | undefined): Promise<unknown> {
  if (raw === undefined) return undefined;
  let text = raw;
  if (raw === "-") text = await readLocalText("-");
  else if (raw.startsWith("@")) text = await readLocalText(raw.slice(1));
  try {
    return JSON.parse(text);
  } catch (err) {
    throw usageError(
      "data_invalid_json",
      `--data is not valid JSON: ${errorMessage(err)}`,
      `e.g. --data '{"order_id": 42}', --data @event.json or --data - (stdin)`,
    );
  }
}

/** What became of an event's start of one workflow: its run, a debounced start's state, or why none. */
function startOutcome(s: EventRecord["started"][number]): string {
  if (s.run_id) return s.run_id;
  if (s.debounced_until) {
    return `(debounced: starts at ${s.debounced_until} unless a later event supersedes it)`;
  }
  if (s.superseded_by) return `(debounced: superseded by event ${s.superseded_by})`;
  return `(${s.error})`;
}

/** What an event did, for people. */
function eventLines(e: EventRecord, duplicate: boolean): string[] {
  const started = e.started.map((s) => `${s.workflow_id} ${startOutcome(s)}`);
  return [
    ...fields([
      ["event", `${e.name} ${e.id}${duplicate ? " (duplicate: already received, nothing done)" : ""}`],
      ["received", e.received_at],
      ["resumed", e.resumed.map((r) => `${r.run_id} ${r.step}`).join(", ") || "-"],
      ["started", started.join(", ") || "-"],
    ]),
  ];
}

/** `stn events send|list`: events to everyone (docs/events.md). */
export function eventsCommand(program: Command): void {
  const events = program.command("events").alias("event").description(
    "send events that resume waiting steps and start triggered workflows; list recorded events",
  );
  events.command("send")
    .description(
      "send an event: resumes every step waiting for it (whose match holds), starts triggered workflows",
    )
    .argument("<name>", "event name, e.g. order.paid")
    .option("--data <json>", "event data: JSON, @file.json, or - for stdin")
    .option("--id <id>", "idempotency key: sending the same id again does nothing (within events.retention)")
    .action(async (name: string, opts: { data?: string; id?: string }, cmd) => {
      const data = await readData(opts.data);
      await withStation(cmd, async (client) => {
        const r = await (await eventsClient()).sendEvent(client, { name, data, id: opts.id });
        render(r, { json: jsonMode(cmd), text: (a) => eventLines(a.event, a.duplicate) });
      });
    });
  pageFlags(
    events.command("list")
      .description("list recorded events, newest first, with the runs each resumed and started")
      .option("--name <name>", "only events of this name"),
    20,
  ).action(async (opts: { name?: string; limit: string; cursor?: string; all?: boolean }, cmd) => {
    await withStation(cmd, async (client) => {
      const { listEvents } = await eventsClient();
      const page = await readPages<"events", EventRecord>(
        opts,
        "events",
        (cursor, limit) => listEvents(client, { name: opts.name, limit, cursor }),
      );
      render(page, {
        json: jsonMode(cmd),
        text: (p) => {
          moreNote(p.next_cursor);
          return table(
            ["EVENT", "NAME", "SOURCE", "RECEIVED", "RESUMED", "STARTED"],
            p.events.map((e) => [
              e.id,
              e.name,
              e.source,
              e.received_at,
              String(e.resumed.length),
              String(e.started.filter((s) => s.run_id).length),
            ]),
          );
        },
      });
    });
  });
}

/** `stn workflow signal <run> <name>`: a signal to one run. */
export function workflowSignalCommand(workflow: Command): void {
  workflow.command("signal")
    .description(
      "signal a run: its step waiting for <name> gets it, else it is kept until a step waits for it",
    )
    .argument("<run>", "run id")
    .argument("<name>", "signal name, e.g. ci.finished")
    .option("--data <json>", "signal data: JSON, @file.json, or - for stdin")
    .option("--id <id>", "idempotency key: the same id again does nothing")
    .action(async (runId: string, name: string, opts: { data?: string; id?: string }, cmd) => {
      const payload = await readData(opts.data);
      await withStation(cmd, async (client) => {
        const r = await (await eventsClient()).signalRun(client, runId, { name, payload, id: opts.id });
        render(r, { json: jsonMode(cmd), text: (a) => `${a.run.id} ${a.run.status}: ${a.message}` });
      });
    });
}
