import type { Command } from "commander";
import { globals, withStation } from "./context.ts";
import { CliExit, printFields, printJson } from "./output.ts";

const SOURCE_TEXT = {
  flag: "from --station",
  env: "from STATION_URL",
  "server.json": "from run/server.json",
  embedded: "embedded: started for this command",
} as const;

/** `stn status`: which server the CLI would talk to, and that server's health. */
export function statusCommand(program: Command): void {
  program.command("status")
    .description(
      "show which server commands talk to (--station, STATION_URL, server.json or embedded) and its health",
    )
    .action(async (_opts: unknown, cmd: Command) => {
      const healthy = await withStation(cmd, async (client, target) => {
        const health = await client.health();
        if (globals(cmd).json) {
          printJson({ target, health });
        } else {
          printFields([
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
              `${health.nats.url ? ` ${health.nats.url}` : ""})` +
              (health.nats.error ? `: ${health.nats.error}` : ""),
            ],
          ]);
        }
        return health.status === "ok";
      });
      if (!healthy) throw new CliExit(1);
    });
}
