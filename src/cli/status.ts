/** `stn status`: which server a command would use, and that server's health. */

import { lazyImport } from "../lib/lazy_import.ts";
import type { Command } from "./command.ts";
import { commandConfig, globals, jsonMode, withStation } from "./context.ts";
import { fail, fields, render, StationError } from "./output.ts";
import type { Target } from "../client/discovery.ts";
import type { StationClient } from "../client/http.ts";
import type { ContainerState } from "../deploy/lookup.ts";
import { formatDuration } from "../lib/duration.ts";
import { readServerFile } from "../config/server_file.ts";

type Health = Awaited<ReturnType<StationClient["health"]>>;

const SOURCE_TEXT = {
  flag: "from --station",
  env: "from STATION_URL",
  "server.json": "from run/server.json",
  embedded: "embedded: started for this command",
} as const;

function containerLines(c: ContainerState | undefined): [string, string][] {
  if (!c) return [];
  const up = formatDuration(Math.max(0, Date.now() - Date.parse(c.started_at)));
  return [["container", `${c.container} ${c.state}, up ${up}`], ["ports", c.ports.join(", ")], [
    "image",
    c.image,
  ]];
}

/** The `stn up` container server.json announces (when no --station / STATION_URL overrides it); fails when it is down. */
async function upContainer(cmd: Command): Promise<ContainerState | undefined> {
  if (globals(cmd).station || Deno.env.get("STATION_URL")) return undefined;
  const name = readServerFile((await commandConfig(cmd)).paths.serverJson)?.container;
  if (!name) return undefined;
  // Docker's client loads only when a station runs in a container (stn up), not for every stn status.
  const state =
    await (await lazyImport<typeof import("../deploy/lookup.ts")>("../deploy/lookup.ts", import.meta.url))
      .containerState(name);
  if (state?.running) return state;
  throw new StationError("station_not_running", `${name} is not running (${state?.state ?? "removed"})`, {
    hint: "stn up starts it again; stn logs shows why it stopped",
  });
}

function statusText(
  { target, health, container }: { target: Target; health: Health; container?: ContainerState },
): string[] {
  return fields([
    ...containerLines(container),
    ["server", `${target.url} (${SOURCE_TEXT[target.source]})`],
    ["status", health.status],
    ["version", health.version],
    [
      "db",
      health.db.status + (health.db.schema_version ? ` (schema ${health.db.schema_version})` : "") +
      (health.db.error ? `: ${health.db.error}` : ""),
    ],
    [
      "nats",
      `${health.nats.status} (${health.nats.managed ? "managed" : "external"}` +
      `${health.nats.url ? ` ${health.nats.url}` : ""}` +
      (health.nats.bin ? `, ${health.nats.bin})` : ")") +
      (health.nats.error ? `: ${health.nats.error}` : ""),
    ],
  ]);
}

/** `stn status`: which server the CLI would talk to, and that server's health. */
export function statusCommand(program: Command): void {
  program.command("status")
    .description(
      "show which server commands talk to (--station, STATION_URL, server.json or embedded) and its health; " +
        "for a stn up station also its container (exit 1 when it is not running)",
    )
    .action(async (_opts: unknown, cmd: Command) => {
      const container = await upContainer(cmd);
      await withStation(cmd, async (client, target) => {
        const result = { target, health: await client.health(), ...(container ? { container } : {}) };
        const view = { json: jsonMode(cmd), text: statusText };
        if (result.health.status === "ok") return render(result, view);
        fail(
          result,
          view,
          new StationError("station_degraded", `stn at ${target.url} is ${result.health.status}`, {
            hint: "the db and nats lines say which part is down",
          }),
        );
      });
    });
}
