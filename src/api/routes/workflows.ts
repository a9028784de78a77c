import { type Context, Hono } from "hono";
import { z } from "zod";
import { StationError } from "../../errors.ts";
import { requireShallow } from "../../lib/nesting.ts";
import type { StationContext } from "../../runtime/context.ts";
import { validateSource } from "../../workflows/definition/load.ts";
import { validateDefinition, type ValidationResult } from "../../workflows/definition/validate.ts";
import { syncEnvironment } from "../../workflows/sync.ts";
import { parseWith, readJson } from "../validate.ts";

/**
 * /api/v1/workflows: create, validate, list, show (any version), update, disable/enable, delete.
 * A definition is sent as JSON, or as the raw file with `Content-Type: application/yaml`.
 * Invalid definitions are 422 `workflow_invalid` with the validator's issues in `details`.
 */

const YAML_TYPES = ["application/yaml", "application/x-yaml", "text/yaml", "text/x-yaml"];

/** Reads a definition body (JSON or YAML) and validates it; `defaultId` fills a missing id. */
async function readDefinition(c: Context, defaultId?: string): Promise<ValidationResult> {
  const type = (c.req.header("content-type") ?? "").split(";")[0].trim().toLowerCase();
  const text = await c.req.text();
  if (YAML_TYPES.includes(type)) return validateSource(text, { defaultId });
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (err) {
    throw new StationError("invalid_json", `request body is not valid JSON: ${(err as Error).message}`, {
      status: 400,
      hint: "send the definition as JSON, or the YAML file with Content-Type: application/yaml",
    });
  }
  return validateDefinition(requireShallow(body, "request body"), { defaultId });
}

/** Throws 422 `workflow_invalid` carrying the issues when the definition is invalid. */
function requireValid(result: ValidationResult) {
  if (result.valid && result.definition) return result.definition;
  const first = result.errors[0];
  throw new StationError(
    "workflow_invalid",
    `the workflow definition is invalid (${result.errors.length} error${
      result.errors.length === 1 ? "" : "s"
    }): ` +
      `${first.path}: ${first.message}`,
    {
      status: 422,
      hint: first.hint ?? "POST /api/v1/workflows/validate lists every issue",
      details: { errors: result.errors, warnings: result.warnings },
    },
  );
}

const ListQuery = z.strictObject({ status: z.enum(["active", "disabled"]).optional() });
const VersionParam = z.coerce.number().int().min(1);
const DeleteQuery = z.strictObject({ purge: z.enum(["true", "false"]).optional() });
const SyncBody = z.strictObject({ environment: z.string().min(1).optional() });

/** The workflow routes, mounted at /api/v1/workflows. */
export function workflowRoutes(ctx: StationContext): Hono {
  const store = ctx.workflows;
  return new Hono()
    .post("/validate", async (c) => c.json(await readDefinition(c)))
    .post("/", async (c) => {
      const result = await readDefinition(c);
      const saved = store.save(requireValid(result), { source: "api" });
      return c.json({ ...saved, warnings: result.warnings }, saved.outcome === "created" ? 201 : 200);
    })
    .get("/", (c) => {
      const q = parseWith(ListQuery, c.req.query(), "query");
      return c.json({ workflows: store.list(q) });
    })
    .get("/:id", (c) => {
      const v = c.req.query("version");
      const version = v === undefined ? undefined : parseWith(VersionParam, v, "version");
      const id = c.req.param("id");
      return c.json({ workflow: store.record(id), ...store.get(id, version) });
    })
    .get("/:id/versions", (c) => c.json({ versions: store.versions(c.req.param("id")) }))
    .get("/:id/versions/:version", (c) => {
      const id = c.req.param("id");
      const version = parseWith(VersionParam, c.req.param("version"), "version");
      return c.json({ workflow: store.record(id), ...store.get(id, version) });
    })
    .put("/:id", async (c) => {
      const id = c.req.param("id");
      store.record(id);
      const result = await readDefinition(c, id);
      const def = requireValid(result);
      if (def.id !== id) {
        throw new StationError(
          "workflow_id_mismatch",
          `the body defines \`${def.id}\`, the path names \`${id}\``,
          {
            status: 400,
            hint: `PUT /api/v1/workflows/${def.id}, or set id: ${id} (or leave id out)`,
          },
        );
      }
      return c.json({ ...store.save(def, { source: "api" }), warnings: result.warnings });
    })
    .post("/:id/enable", (c) => c.json({ workflow: store.enable(c.req.param("id")) }))
    .post("/:id/disable", (c) => c.json({ workflow: store.disable(c.req.param("id")) }))
    .delete("/:id", (c) => {
      const id = c.req.param("id");
      const q = parseWith(DeleteQuery, c.req.query(), "query");
      if (q.purge === "true") {
        store.delete(id);
        return c.json({ id, deleted: true });
      }
      return c.json({ workflow: store.disable(id), deleted: false });
    });
}

/** POST /api/v1/sync `{environment?}`: DeclarativeSync of an environment's files. */
export function syncRoutes(ctx: StationContext): Hono {
  return new Hono().post("/", async (c) => {
    const body = await readJson(c, SyncBody);
    const environment = body.environment ?? ctx.config.values.workflows.environment;
    return c.json(await syncEnvironment(ctx.workflows, ctx.config.paths.environments, environment));
  });
}
