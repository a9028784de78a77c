import type { Command } from "./command.ts";
import { addLogSink, log } from "../log.ts";
import { openLogFile } from "../lib/log_file.ts";
import { commandConfig, jsonMode, numberFlag, runtimeOf } from "./context.ts";
import { CliExit, note, renderError } from "./output.ts";

/** `stn serve`: runs the station until SIGINT/SIGTERM, or until a part it needs dies. */
export function serveCommand(program: Command): void {
  program.command("serve")
    .description("run the stn runtime: API, workflow engine and managed NATS, until Ctrl-C")
    .option(
      "--host <addr>",
      "address to listen on (server.host; non-loopback needs an API token; names it answers to: server.allowed_hosts)",
    )
    .option("--port <n>", "API port (server.port)")
    .option("--mcp-port <n>", "MCP management server port (server.mcp_port)")
    .option("--agent-port <n>", "MCP agent server port (server.agent_port)")
    .option("--nats-url <url>", "use this NATS server instead of starting one (nats.url)")
    .option("--no-local-workers", "run no steps here: only `stn worker` processes do (engine.workers = 0)")
    .option("--log-level <level>", "debug, info, warn, error or silent (log.level)")
    .action(
      async (
        opts: {
          host?: string;
          port?: string;
          mcpPort?: string;
          agentPort?: string;
          natsUrl?: string;
          logLevel?: string;
          localWorkers: boolean;
        },
        cmd: Command,
      ) => {
        const config = await commandConfig(cmd, {
          "server.host": opts.host,
          "server.port": numberFlag(opts.port),
          "server.mcp_port": numberFlag(opts.mcpPort),
          "server.agent_port": numberFlag(opts.agentPort),
          "nats.url": opts.natsUrl,
          "log.level": opts.logLevel,
          ...(opts.localWorkers ? {} : { "engine.workers": 0 }),
        });
        // Listen before starting: a signal that arrives while the station comes up (or right after
        // server.json appears) must still stop it cleanly, not kill the process half-way.
        const signals: Deno.Signal[] = ["SIGINT", "SIGTERM"];
        let onSignal!: () => void;
        const signalled = new Promise<void>((resolve) => (onSignal = resolve));
        for (const s of signals) Deno.addSignalListener(s, onSignal);
        // Every log line also goes to $STATION_HOME/logs/stn.log, which `stn logs` reads (docs/cli.md).
        const logFile = openLogFile(config.paths.logsDir);
        const stopLogFile = addLogSink(logFile.write);
        try {
          // The runtime loads here, not at CLI start: client commands never pay for it (docs/benchmarks.md).
          const station = await runtimeOf(cmd).startStation(config, { announce: true, mcp: true });
          const { nats } = station.ctx;
          log.info(`stn serve listening on ${station.url}`, {
            mcp: station.mcp?.url,
            agent_mcp: station.mcp?.agentUrl,
            nats: nats.managed ? `managed ${nats.url}` : nats.url,
            db: config.paths.db,
          });
          const outcome = await Promise.race([
            signalled.then(() => ({ kind: "signal" as const })),
            station.fatal.then((error) => ({ kind: "fatal" as const, error })),
          ]);
          if (outcome.kind === "fatal") renderError(outcome.error, { json: jsonMode(cmd) });
          log.info("stn serve stopping");
          await station.stop();
          if (outcome.kind === "fatal") {
            note("stn serve stopped: it cannot run without NATS");
            throw new CliExit(1);
          }
          log.info("stn serve stopped");
        } finally {
          for (const s of signals) Deno.removeSignalListener(s, onSignal);
          stopLogFile();
          logFile.close();
        }
      },
    );
}
