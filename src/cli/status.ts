import type { Command } from "commander";
import { jsonMode, withStation } from "./context.ts";
import { fail, fields, render, StationError } from "./output.ts";
import type { Target } from "../client/discovery.ts";
import type { StationClient } from "../client/http.ts";

type Health = Awaited<ReturnType<StationClient["health"]>>;

const SOURCE_TEXT = {
  flag: "from --station",
  env: "from STATION_URL",
  "server.json": "from run/server.json",
  embedded: "embedded: started for this command",
} as const;

function statusText({ target, health }: { target: Target; health: Health }): string[] {
  return fields([
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
      "show which server commands talk to (--station, STATION_URL, server.json or embedded) and its health",
    )
    .action(async (_opts: unknown, cmd: Command) => {
      await withStation(cmd, async (client, target) => {
        const result = { target, health: await client.health() };
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
