import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { getStoredAgent, listAgents } from "../../agents/store.ts";
import { AgentEnvironmentQuery, AgentList, AgentNameParam, AgentShow } from "../../contract/agents.ts";
import { StationError } from "../../errors.ts";
import { invalidAgents, requireRunnable, toolReadiness } from "../../environments/agent_status.ts";
import type { StationContext } from "../../context.ts";
import { errors, json, openapi, router } from "../openapi.ts";

/**
 * /api/v1/agents: the agents `stn sync` stored from `environments/<env>/agents/*.prompt`, read-only
 * (the files are the source of truth; edit them and sync).
 */

const tags = ["agents"];

const listRoute = createRoute({
  method: "get",
  path: "/",
  tags,
  summary: "List an environment's agents",
  request: { query: AgentEnvironmentQuery },
  responses: { 200: json(AgentList, "the agents, by name"), ...errors("invalid_request") },
});

const showRoute = createRoute({
  method: "get",
  path: "/{name}",
  tags,
  summary: "One agent with its whole definition",
  request: { params: AgentNameParam, query: AgentEnvironmentQuery },
  responses: {
    200: json(AgentShow, "the agent"),
    ...errors("invalid_request", "agent_not_found", "agent_invalid"),
  },
});

/** The agent routes, mounted at /api/v1/agents. */
export function agentRoutes(ctx: StationContext): OpenAPIHono {
  const app = router();
  const envOf = (q: { environment?: string }) => q.environment ?? ctx.config.values.workflows.environment;
  openapi(app, listRoute, async (c) => {
    const environment = envOf(c.req.valid("query"));
    const agents = listAgents(ctx.db, environment).map(({ definition: d, updated_at }) => {
      const tools = toolReadiness(ctx.db, environment, d.tools);
      return {
        name: d.name,
        status: tools.status,
        problem: tools.problem,
        environment: d.environment,
        description: d.description,
        model: d.model ?? null,
        tags: d.tags,
        max_steps: d.max_steps,
        tools: d.tools,
        agents: d.agents,
        sandbox: d.sandbox !== undefined,
        schedule: d.schedule?.cron ?? null,
        path: d.path,
        updated_at,
      };
    });
    const invalid = [...await invalidAgents(ctx.db, ctx.config.paths.environments, environment)]
      .map(([name, f]) => ({ name, file: f.file, problem: f.problem }));
    return c.json({ environment, agents, invalid }, 200);
  });
  openapi(app, showRoute, async (c) => {
    const { name } = c.req.valid("param");
    const environment = envOf(c.req.valid("query"));
    const stored = getStoredAgent(ctx.db, environment, name);
    // Not stored: says whether the file is missing or invalid (and why).
    if (!stored) {
      await requireRunnable(ctx.db, ctx.config.paths.environments, { environment, name });
      throw new StationError("agent_not_found", `no agent \`${name}\` in environment \`${environment}\``);
    }
    return c.json(
      { agent: stored.definition, created_at: stored.created_at, updated_at: stored.updated_at },
      200,
    );
  });
  return app;
}
