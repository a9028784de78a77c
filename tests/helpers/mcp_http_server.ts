/**
 * A test MCP server over Streamable HTTP: a real local HTTP server (Deno.serve on 127.0.0.1, a free
 * port) with the SDK's web-standard server transport, one SDK server per MCP session. Its tools are in
 * tests/helpers/mcp_test_tools.ts (echo, big, fail, slow, was_cancelled, mixed, env, pid), plus `header`:
 * the value of request header `name` on the call (to see what the client sent).
 *
 *   const mcp = await startHttpMcpServer({ prefix: "h_" });   // mcp.url = http://127.0.0.1:<port>/mcp
 *   mcp.cancelled();  mcp.requests;  await mcp.close();
 *
 * Or as a process: `deno run -A tests/helpers/mcp_http_server.ts [--prefix p_]` prints the URL.
 */
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { z } from "zod";
import { type CancelState, testMcpServer } from "./mcp_test_tools.ts";

/** A running test MCP HTTP server. */
export interface HttpMcpServer {
  url: string;
  /** `slow` calls cancelled so far (across sessions). */
  cancelled(): number;
  /** HTTP requests received (every method). */
  requests: number;
  close(): Promise<void>;
}

/** Starts the test MCP server over Streamable HTTP on a free loopback port. */
export function startHttpMcpServer(options: { prefix?: string } = {}): Promise<HttpMcpServer> {
  const state: CancelState = { cancelled: 0 };
  const sessions = new Map<string, WebStandardStreamableHTTPServerTransport>();
  let requests = 0;

  async function handle(req: Request): Promise<Response> {
    requests++;
    if (new URL(req.url).pathname !== "/mcp") return new Response("not found", { status: 404 });
    const id = req.headers.get("mcp-session-id");
    let transport = id ? sessions.get(id) : undefined;
    if (!transport) {
      if (id) return new Response("unknown session", { status: 404 });
      const t: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => crypto.randomUUID(),
        onsessioninitialized: (sid: string) => void sessions.set(sid, t),
        onsessionclosed: (sid: string) => void sessions.delete(sid),
      });
      const server = testMcpServer({ prefix: options.prefix, state });
      server.registerTool(`${options.prefix ?? ""}header`, {
        description: "The value of a request header on this call",
        inputSchema: { name: z.string() },
      }, ({ name }: { name: string }, extra: { requestInfo?: { headers: Record<string, string> } }) => ({
        content: [{ type: "text" as const, text: extra.requestInfo?.headers[name.toLowerCase()] ?? "" }],
      }));
      await server.connect(t);
      transport = t;
    }
    return await transport.handleRequest(req);
  }

  return new Promise((resolve) => {
    const httpServer = Deno.serve({
      hostname: "127.0.0.1",
      port: 0,
      onListen: () => {},
    }, handle);
    const { port } = httpServer.addr as Deno.NetAddr;
    resolve({
      url: `http://127.0.0.1:${port}/mcp`,
      cancelled: () => state.cancelled,
      get requests() {
        return requests;
      },
      close: async () => {
        for (const t of sessions.values()) await t.close().catch(() => {});
        await httpServer.shutdown();
      },
    });
  });
}

if (import.meta.main) {
  const i = Deno.args.indexOf("--prefix");
  const mcp = await startHttpMcpServer({ prefix: i >= 0 ? Deno.args[i + 1] : "" });
  console.log(mcp.url);
}
