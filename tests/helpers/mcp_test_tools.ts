/**
 * The tools of stn's test MCP servers (tests/helpers/mcp_stdio_server.ts over stdio,
 * tests/helpers/mcp_http_server.ts over Streamable HTTP), registered on a real SDK `McpServer`:
 *
 * - `echo` — returns its arguments as JSON text (and as structured content).
 * - `big` — returns `bytes` (default 102400) characters of text, `abcdefghij` repeated.
 * - `fail` — an `isError: true` result whose text is `fail: <message>` (default "this tool always fails").
 * - `slow` — waits `ms` (default 60 s) and answers "finished"; when the client cancels the call it records
 *   the cancellation: `was_cancelled` counts it, and a line `cancelled slow <tag>` is appended to the file
 *   named by `MCP_TEST_CANCEL_LOG` (stdio: the child's environment; HTTP: the test process's) if set.
 * - `was_cancelled` — the number of `slow` calls cancelled so far in this server process.
 * - `mixed` — text, an image and structured content in one result (content conversion).
 * - `env` — the value of the server process's environment variable `name` ("" when unset).
 * - `pid` — the server process's id (to check that closing a stdio connection stopped it).
 * A `prefix` (`--prefix p_` for stdio) is put in front of every tool name, so two test servers can
 * live in one environment without a duplicate tool.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";

/** Where a server's `slow` cancellations are counted. */
export interface CancelState {
  cancelled: number;
}

type Extra = { signal: AbortSignal };

/** A tiny 1×1 PNG for the `mixed` tool's image content. */
const PNG_1X1 =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";

/** A new SDK server with the test tools registered (see the comment at the top of this file). */
export function testMcpServer(options: { prefix?: string; state?: CancelState } = {}): McpServer {
  const p = options.prefix ?? "";
  const state = options.state ?? { cancelled: 0 };
  const server = new McpServer({ name: "stn-test-mcp", version: "1.0.0" });
  const text = (t: string) => ({ content: [{ type: "text" as const, text: t }] });

  server.registerTool(`${p}echo`, {
    description: "Returns its arguments",
    inputSchema: z.looseObject({ text: z.string().optional() }),
  }, (args: Record<string, unknown>) => ({ ...text(JSON.stringify(args)), structuredContent: args }));

  server.registerTool(
    `${p}big`,
    {
      description: "Returns 100 KB of text",
      inputSchema: { bytes: z.number().int().positive().optional() },
    },
    ({ bytes }: { bytes?: number }) =>
      text("abcdefghij".repeat(Math.ceil((bytes ?? 102400) / 10)).slice(0, bytes ?? 102400)),
  );

  server.registerTool(
    `${p}fail`,
    {
      description: "Always fails",
      inputSchema: { message: z.string().optional() },
    },
    ({ message }: { message?: string }) => ({
      ...text(`fail: ${message ?? "this tool always fails"}`),
      isError: true,
    }),
  );

  server.registerTool(`${p}slow`, {
    description: "Waits until cancelled (or ms elapse)",
    inputSchema: { ms: z.number().int().nonnegative().optional(), tag: z.string().optional() },
  }, async ({ ms, tag }: { ms?: number; tag?: string }, extra: Extra) => {
    const cancelled = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), ms ?? 60_000);
      extra.signal.addEventListener("abort", () => {
        clearTimeout(timer);
        resolve(true);
      }, { once: true });
    });
    if (!cancelled) return text("finished");
    state.cancelled++;
    const log = Deno.env.get("MCP_TEST_CANCEL_LOG");
    if (log) await Deno.writeTextFile(log, `cancelled slow ${tag ?? ""}\n`, { append: true });
    return text("cancelled");
  });

  server.registerTool(`${p}was_cancelled`, {
    description: "How many slow calls were cancelled",
    inputSchema: {},
  }, () => text(String(state.cancelled)));

  server.registerTool(`${p}mixed`, {
    description: "Text, an image and structured content",
    inputSchema: {},
  }, () => ({
    content: [
      { type: "text" as const, text: "a chart:" },
      { type: "image" as const, data: PNG_1X1, mimeType: "image/png" },
    ],
    structuredContent: { total: 3 },
  }));

  server.registerTool(`${p}env`, {
    description: "The value of an environment variable of the server process",
    inputSchema: { name: z.string() },
  }, ({ name }: { name: string }) => text(Deno.env.get(name) ?? ""));

  server.registerTool(`${p}pid`, {
    description: "The server process's id",
    inputSchema: {},
  }, () => text(String(Deno.pid)));

  return server;
}
