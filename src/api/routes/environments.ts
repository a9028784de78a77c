import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { EnvironmentList } from "../../contract/environments.ts";
import type { StationContext } from "../../runtime/context.ts";
import { listEnvironments } from "../../workflows/environments.ts";
import { json, openapi, router } from "../openapi.ts";

const listRoute = createRoute({
  method: "get",
  path: "/",
  tags: ["environments"],
  summary: "The environments under $STATION_HOME/environments (sync one with POST /api/v1/sync)",
  responses: { 200: json(EnvironmentList, "the environments, by name") },
});

/** GET /api/v1/environments */
export function environmentRoutes(ctx: StationContext): OpenAPIHono {
  const app = router();
  openapi(app, listRoute, (c) =>
    c.json({
      environments: listEnvironments(ctx.config.paths.environments, ctx.config.values.workflows.environment),
    }, 200));
  return app;
}
