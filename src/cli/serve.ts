import type { Command } from "commander";
import { log } from "../log.ts";
import { startStation } from "../runtime/station.ts";
import { commandConfig, numberFlag } from "./context.ts";
import { CliExit, printError } from "./output.ts";

/** `stn serve`: runs the station until SIGINT/SIGTERM, or until a part it needs dies. */
export function serveCommand(program: Command): void {
  program.command("serve")
    .description("run the stn runtime: API, workflow engine and managed NATS, until Ctrl-C")
    .option("--host <addr>", "address to listen on (server.host; non-loopback needs an API token)")
    .option("--port <n>", "API port (server.port)")
    .option("--nats-url <url>", "use this NATS server instead of starting one (nats.url)")
    .option("--log-level <level>", "debug, info, warn, error or silent (log.level)")
    .action(
      async (opts: { host?: string; port?: string; natsUrl?: string; logLevel?: string }, cmd: Command) => {
        const config = commandConfig(cmd, {
          "server.host": opts.host,
          "server.port": numberFlag(opts.port),
          "nats.url": opts.natsUrl,
          "log.level": opts.logLevel,
        });
        const station = await startStation(config, { announce: true });
        const { nats } = station.ctx;
        log.info(`stn serve listening on ${station.url}`, {
          nats: nats.managed ? `managed ${nats.url}` : nats.url,
          db: config.paths.db,
        });

        const signals: Deno.Signal[] = ["SIGINT", "SIGTERM"];
        let onSignal!: () => void;
        const signalled = new Promise<Deno.Signal>((resolve) => {
          onSignal = () => resolve("SIGTERM");
          for (const s of signals) Deno.addSignalListener(s, onSignal);
        });
        const outcome = await Promise.race([
          signalled.then(() => ({ kind: "signal" as const })),
          station.fatal.then((error) => ({ kind: "fatal" as const, error })),
        ]);
        for (const s of signals) Deno.removeSignalListener(s, onSignal);

        if (outcome.kind === "fatal") printError(outcome.error);
        log.info("stn serve stopping");
        await station.stop();
        if (outcome.kind === "fatal") {
          console.error("stn serve stopped: it cannot run without NATS");
          throw new CliExit(1);
        }
        log.info("stn serve stopped");
      },
    );
}
