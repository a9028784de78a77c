/**
 * Homes for agents on `stn worker`s (docs/workers.md#agent-steps): agents that call the test MCP server's
 * echo, its call log, and which turn of the loop a model request is.
 */

import { assertEquals } from "./assert.ts";
import { type TempHome, tempHome } from "./home.ts";
import { stdioServerEntry } from "./mcp_stdio_server.ts";
import type { ModelRequest, ModelServer } from "./model_server.ts";
import { runStn } from "./stn.ts";

/** An agent that calls the test MCP server's echo, up to 6 steps. */
export const LOOPER_PROMPT =
  '---\nmodel: openai/test-model\ntools: ["__echo"]\nmax_steps: 6\n---\n{{userInput}}\n';

/**
 * A home with these agents (name → `.prompt` text) and the test MCP server (its calls logged to calls.log),
 * synced and trusted; a short lease, so a killed worker's work is taken over within seconds.
 */
export async function workerAgentHome(modelUrl: string, agents: Record<string, string>): Promise<TempHome> {
  const home = await tempHome();
  home.writeConfig(
    `ai:\n  provider: openai\n  base_url: ${modelUrl}\n  api_key: sk-test\nengine:\n  lease: 2s\n  ack_wait: 2s\n`,
  );
  const env = home.path("environments", "default");
  Deno.mkdirSync(`${env}/agents`, { recursive: true });
  Deno.mkdirSync(`${env}/mcp-configs`);
  for (const [name, prompt] of Object.entries(agents)) {
    Deno.writeTextFileSync(`${env}/agents/${name}.prompt`, prompt);
  }
  Deno.writeTextFileSync(
    `${env}/mcp-configs/servers.json`,
    JSON.stringify({
      mcpServers: { local: stdioServerEntry({ env: { MCP_TEST_CALL_LOG: home.path("calls.log") } }) },
    }),
  );
  const sync = await runStn(["sync", "--trust"], { env: home.env });
  assertEquals(sync.code, 0, sync.stderr);
  return home;
}

/** How many tool results a model request carries: which turn of the loop it is. */
export const turnOf = (r: ModelRequest) =>
  r.body.messages.filter((m: { role: string }) => m.role === "tool").length;

/** The lines of the MCP call log (`<tool> <arguments>`). */
export function mcpCalls(home: TempHome): string[] {
  try {
    return Deno.readTextFileSync(home.path("calls.log")).trim().split("\n").filter(Boolean);
  } catch {
    return [];
  }
}

/**
 * Scripts the kill -9 tests' loop: two echo calls, then the third model call held (never answered where it
 * was asked) until `release()` — called once its worker is killed — and "all done" when asked again.
 */
export function holdThirdTurn(model: ModelServer): { release(): void } {
  let release!: () => void;
  const gone = new Promise<void>((r) => (release = r));
  let held = false;
  model.route((r) => {
    const turn = turnOf(r);
    if (turn < 2) {
      return { calls: [{ name: "__echo", args: { text: `call-${turn + 1}` }, id: `c${turn + 1}` }] };
    }
    if (!held) {
      held = true;
      return { hold: gone, text: "never sent" };
    }
    return { text: "all done" };
  });
  return { release };
}
