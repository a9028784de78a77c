import { z } from "zod";
import { StationError } from "../errors.ts";
import type { SandboxService } from "../sandbox/service.ts";
import { callTool, sandboxRun, type SandboxTool, SESSION_TOOLS } from "../sandbox/tools.ts";
import type { AgentSandbox, AgentTool, Toolbox } from "./types.ts";

/**
 * The sandbox tools of an agent with `sandbox:` (docs/design/agents.md#the-loop), built on the existing tool
 * definitions: `compute` → the one-shot `sandbox_run` with the agent's runtime/image as defaults;
 * `code` → the session tools on one session, opened on first use. Scope `agent`: the session is
 * the run's own and closed with the toolbox; `workflow`: the workflow run's session, shared by its
 * steps and closed by the sandbox service when that run ends. Without a sandbox service (a test run whose
 * sandbox tools are mocked, on a machine without Docker) the tools are offered and a call that reaches them fails.
 */
export function sandboxToolbox(
  service: SandboxService | undefined,
  config: AgentSandbox,
  workflowRunId: string | undefined,
): Toolbox {
  const need = (): SandboxService => {
    if (service) return service;
    throw new StationError("agent_tools_unavailable", "sandboxes are not available here", {
      hint: "start Docker and check `stn doctor` (sandbox.enabled), or mock the sandbox tools",
    });
  };
  if (config.mode === "compute") {
    const tool: AgentTool = {
      name: sandboxRun.name,
      description: sandboxRun.description,
      inputSchema: z.toJSONSchema(sandboxRun.input, { io: "input" }) as Record<string, unknown>,
      call: async (args, signal) =>
        JSON.stringify(
          await callTool(sandboxRun, {
            ...(config.runtime ? { runtime: config.runtime } : {}),
            ...(config.image ? { image: config.image } : {}),
            ...(config.timeout_seconds ? { timeout_seconds: config.timeout_seconds } : {}),
            ...(args as object),
          }, { sandbox: need(), signal }),
        ),
    };
    return { tools: [tool], close: () => Promise.resolve() };
  }
  const shared = config.session === "workflow" && workflowRunId !== undefined;
  let opening: Promise<string> | undefined;
  const session = () =>
    opening ??= need().open({
      runtime: config.runtime,
      image: config.image,
      network: config.allow_network || undefined,
      scope: shared ? "workflow" : "agent",
      run_id: shared ? workflowRunId : undefined,
    }).then((r) => r.session.id);
  const tools = SESSION_TOOLS.map((t): AgentTool => {
    const input = (t.input as z.ZodObject).omit({ sandbox_id: true });
    return {
      name: t.name,
      description: t.description,
      inputSchema: z.toJSONSchema(input, { io: "input" }) as Record<string, unknown>,
      call: async (args, signal) =>
        JSON.stringify(
          await callTool(t as SandboxTool<any>, { ...(args as object), sandbox_id: await session() }, {
            sandbox: need(),
            signal,
          }),
        ),
    };
  });
  return {
    tools,
    close: async () => {
      if (!opening || shared) return;
      const id = await opening.catch(() => undefined);
      if (id) await need().close(id, "agent_run_ended");
    },
  };
}
