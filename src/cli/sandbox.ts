/** `stn sandbox …`: sessions, exec, workspace files and compute-mode runs. */

import { type Command, Option } from "./command.ts";
import {
  closeSandbox,
  deleteSandboxFile,
  execStreaming,
  listSandboxes,
  listSandboxFiles,
  openSandbox,
  outputBytes,
  publishFile,
  readSandboxFile,
  runCode,
  stageFile,
  writeSandboxFile,
} from "../client/sandboxes.ts";
import { usageError } from "../errors.ts";
import { parseDuration } from "../lib/duration.ts";
import type { ExecResult } from "../contract/sandboxes.ts";
import { jsonMode, withStation } from "./context.ts";
import { ttlFlag } from "./flags.ts";
import { readLocalBytes, readLocalText } from "./local_files.ts";
import { CliExit, note, render, table } from "./output.ts";

const collect = (value: string, previous: string[] = []) => [...previous, value];

function envOption(pairs: string[] | undefined): Record<string, string> | undefined {
  if (!pairs?.length) return undefined;
  const env: Record<string, string> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf("=");
    if (eq <= 0) {
      throw usageError("invalid_env", `invalid --env ${JSON.stringify(pair)}`, "use --env NAME=value");
    }
    env[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return env;
}

function timeoutOption(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const ms = parseDuration(value);
  if (ms === null || ms < 1000) {
    throw usageError(
      "invalid_timeout",
      `invalid --timeout ${JSON.stringify(value)}`,
      'a duration like "30s" or "5m"',
    );
  }
  return Math.ceil(ms / 1000);
}

/** `-r, --recursive`, and `-R` for the same (what `ls -R` users type). */
function recursiveFlags(cmd: Command, description: string): Command {
  return cmd.option("-r, --recursive", description).addOption(new Option("-R", "same as -r").hideHelp());
}

/** Writes every byte (writeSync may take only part of them, e.g. on a pipe). */
function writeAll(out: { writeSync(p: Uint8Array): number }, bytes: Uint8Array): void {
  for (let done = 0; done < bytes.length;) done += out.writeSync(bytes.subarray(done));
}

/** Prints an exec/run result's output and ends the command with the command's exit code. */
function finish(cmd: Command, result: ExecResult, printedOutput: boolean): never {
  render(result, {
    json: jsonMode(cmd),
    text: (r) => {
      if (!printedOutput) {
        writeAll(Deno.stdout, outputBytes(r.stdout, r.stdout_b64));
        writeAll(Deno.stderr, outputBytes(r.stderr, r.stderr_b64));
      }
      if (r.truncated) note(`stn: output over the cap was cut (sandbox.max_output_bytes)`);
      if (r.timed_out) note(`stn: the command timed out and was killed`);
    },
  });
  throw new CliExit(result.exit_code);
}

/** `stn sandbox …`: open, use and close Docker sandboxes; run code once. */
export function sandboxCommand(program: Command): void {
  const sandbox = program.command("sandbox").description(
    "isolated Docker sandboxes: a /workspace that persists between commands (no network, non-root)",
  );

  sandbox.command("open")
    .description("open a sandbox and print its id")
    .option("--runtime <name>", "python, node or bash (picks the image from sandbox.images)")
    .option("--image <image>", "an image from sandbox.images or sandbox.allowed_images")
    .option("--network", "give it a network (needs sandbox.allow_network)")
    .action(async (opts: { runtime?: string; image?: string; network?: boolean }, cmd: Command) => {
      await withStation(cmd, async (client) => {
        const out = await openSandbox(client, {
          runtime: opts.runtime,
          image: opts.image,
          network: opts.network,
        });
        render(out, { json: jsonMode(cmd), text: (o) => o.sandbox_id });
      });
    });

  sandbox.command("exec")
    .description("run a command in a sandbox, streaming its output; exits with the command's exit code")
    .argument("<id>", "sandbox id")
    .argument("[command...]", "the command and its arguments (after --)")
    .option("-c, --code <script>", "a shell script run with /bin/sh -c instead of an argv")
    .addOption(new Option("--shell <script>", "the old name of --code").hideHelp())
    .option("--cwd <dir>", "working directory inside /workspace")
    .option("-e, --env <NAME=value>", "environment variable (repeatable)", collect)
    .option("--timeout <duration>", "kill the command after this long (default sandbox.exec_timeout)")
    .action(
      async (
        id: string,
        argv: string[],
        opts: { code?: string; shell?: string; cwd?: string; env?: string[]; timeout?: string },
        cmd: Command,
      ) => {
        const script = opts.code ?? opts.shell;
        if ((argv.length > 0) === (script !== undefined)) {
          throw usageError(
            "invalid_command",
            "give a command after -- or a shell string with -c",
            "stn sandbox exec ID -- python3 main.py",
          );
        }
        const body = {
          cmd: script ?? argv,
          cwd: opts.cwd,
          env: envOption(opts.env),
          timeout_seconds: timeoutOption(opts.timeout),
        };
        const json = jsonMode(cmd);
        await withStation(cmd, async (client) => {
          const result = await execStreaming(client, id, body, {
            onEvent: (e) => {
              if (json || e.type === "result") return;
              writeAll(e.type === "stdout" ? Deno.stdout : Deno.stderr, e.bytes);
            },
          });
          finish(cmd, result, true);
        });
      },
    );

  sandbox.command("write")
    .description("write a file into the sandbox workspace (from a local file or stdin)")
    .argument("<id>", "sandbox id")
    .argument("<path>", "path inside /workspace")
    .option("--from <file>", "local file to send, or - for stdin", "-")
    .action(async (id: string, path: string, opts: { from: string }, cmd: Command) => {
      const bytes = await readLocalBytes(opts.from);
      await withStation(cmd, async (client) => {
        const out = await writeSandboxFile(client, id, path, bytes);
        render({ ...out, size_bytes: bytes.length }, {
          json: jsonMode(cmd),
          text: (o) => note(`wrote ${o.size_bytes} bytes to ${path}`),
        });
      });
    });

  sandbox.command("read")
    .description("read a file from the sandbox workspace")
    .argument("<id>", "sandbox id")
    .argument("<path>", "path inside /workspace")
    .option("-o, --output <file>", "write to this local file instead of stdout (- for stdout)", "-")
    .action(async (id: string, path: string, opts: { output: string }, cmd: Command) => {
      const json = jsonMode(cmd);
      if (json && opts.output === "-") {
        throw usageError(
          "json_with_stdout",
          "--json needs -o FILE here (without it stdout carries the file)",
          "stn --json sandbox read ID PATH -o FILE",
        );
      }
      await withStation(cmd, async (client) => {
        const res = await readSandboxFile(client, id, path);
        if (opts.output === "-") return await res.body!.pipeTo(Deno.stdout.writable, { preventClose: true });
        // Written to a temp name and renamed, so a failed read never leaves half a file.
        const tmp = `${opts.output}.stn-partial`;
        const file = await Deno.open(tmp, { write: true, create: true, truncate: true });
        try {
          await res.body!.pipeTo(file.writable);
          await Deno.rename(tmp, opts.output);
        } catch (err) {
          await Deno.remove(tmp).catch(() => {});
          throw err;
        }
        render({ path: opts.output, size_bytes: (await Deno.stat(opts.output)).size }, { json });
      });
    });

  recursiveFlags(
    sandbox.command("ls")
      .description("list a directory of the sandbox workspace")
      .argument("<id>", "sandbox id")
      .argument("[path]", "directory inside /workspace", "."),
    "list subdirectories too",
  ).action(async (id: string, path: string, opts: { recursive?: boolean; R?: boolean }, cmd: Command) => {
    await withStation(cmd, async (client) => {
      const entries = await listSandboxFiles(client, id, path, Boolean(opts.recursive || opts.R));
      render({ entries }, {
        json: jsonMode(cmd),
        text: (r) =>
          table(
            ["PATH", "TYPE", "SIZE", "MODE", "MODIFIED"],
            r.entries.map((e) => [e.path, e.type, String(e.size), e.mode, e.mtime]),
          ),
      });
    });
  });

  recursiveFlags(
    sandbox.command("rm")
      .description("delete a file (or a directory with -r) from the sandbox workspace")
      .argument("<id>", "sandbox id")
      .argument("<path>", "path inside /workspace"),
    "delete a directory and what it holds",
  ).action(async (id: string, path: string, opts: { recursive?: boolean; R?: boolean }, cmd: Command) => {
    await withStation(
      cmd,
      (client) => deleteSandboxFile(client, id, path, Boolean(opts.recursive || opts.R)),
    );
    render({ path, deleted: true }, { json: jsonMode(cmd) });
  });

  sandbox.command("stage")
    .description("copy a file from the file store (stn files upload) into the sandbox")
    .argument("<id>", "sandbox id")
    .argument("<file_key>", "file store key, or an upload id f_…")
    .argument("<dest>", "path inside /workspace")
    .action(async (id: string, key: string, dest: string, _opts: unknown, cmd: Command) => {
      await withStation(cmd, async (client) => {
        const out = await stageFile(client, id, key, dest);
        render(out, {
          json: jsonMode(cmd),
          text: (o) => note(`staged ${key} to ${o.path} (${o.size_bytes} bytes)`),
        });
      });
    });

  sandbox.command("publish")
    .description("copy a sandbox file into the file store and print its key (then: stn files download KEY)")
    .argument("<id>", "sandbox id")
    .argument("<path>", "path inside /workspace")
    .option("--key <key>", "file store key (default sessions/<id>/<path>)")
    .option("--overwrite", "replace the key if it exists (only under the sandbox's own scope)")
    .option(
      "--ttl <duration>",
      "how long the file lives, e.g. 24h (default: with the sandbox under sessions/<id>/, " +
        "storage.run_output_ttl under runs/<run>/output/, else storage.default_ttl)",
    )
    .option("--keep", "never expire the file (same as --ttl 0)")
    .action(async (
      id: string,
      path: string,
      opts: { key?: string; overwrite?: boolean; ttl?: string; keep?: boolean },
      cmd: Command,
    ) => {
      const ttl = ttlFlag(opts);
      await withStation(cmd, async (client) => {
        render(await publishFile(client, id, path, { file_key: opts.key, overwrite: opts.overwrite, ttl }), {
          json: jsonMode(cmd),
          text: (o) => o.file_key,
        });
      });
    });

  sandbox.command("close")
    .description("close a sandbox: its container and workspace are removed")
    .argument("<id>", "sandbox id")
    .action(async (id: string, _opts: unknown, cmd: Command) => {
      await withStation(cmd, async (client) => {
        render(await closeSandbox(client, id), { json: jsonMode(cmd) });
      });
    });

  sandbox.command("list")
    .description("list open sandboxes")
    .option("--all", "include closed ones")
    .action(async (opts: { all?: boolean }, cmd: Command) => {
      await withStation(cmd, async (client) => {
        const sandboxes = await listSandboxes(client, opts.all ?? false);
        render({ sandboxes }, {
          json: jsonMode(cmd),
          text: (r) =>
            table(
              ["ID", "IMAGE", "SCOPE", "STATUS", "CREATED", "LAST USED"],
              r.sandboxes.map((s) => [s.id, s.image, s.scope, s.status, s.created_at, s.last_used_at]),
            ),
        });
      });
    });

  sandbox.command("run")
    .description("run code once in a fresh container (removed afterwards); exits with its exit code")
    .option("--runtime <name>", "python, node or bash")
    .option("--image <image>", "an allowed image instead of the runtime's")
    .option("--file <file>", "the program to run (- for stdin)")
    .option("-c, --code <code>", "the program as a string")
    .option("-a, --arg <arg>", "argument for the program (repeatable)", collect)
    .option("-e, --env <NAME=value>", "environment variable (repeatable)", collect)
    .option("--timeout <duration>", "kill it after this long")
    .action(
      async (
        opts: {
          runtime?: string;
          image?: string;
          file?: string;
          code?: string;
          arg?: string[];
          env?: string[];
          timeout?: string;
        },
        cmd: Command,
      ) => {
        if ((opts.file === undefined) === (opts.code === undefined)) {
          throw usageError(
            "invalid_code",
            "give the program with --file or -c",
            "stn sandbox run --runtime python -c 'print(1)'",
          );
        }
        const code = opts.code ?? await readLocalText(opts.file!);
        await withStation(cmd, async (client) => {
          const result = await runCode(client, {
            runtime: opts.runtime,
            image: opts.image,
            code,
            args: opts.arg,
            env: envOption(opts.env),
            timeout_seconds: timeoutOption(opts.timeout),
          });
          finish(cmd, result, false);
        });
      },
    );
}
