import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { CreateBundleBody, InstallBundleQuery, InstallResult } from "../../contract/bundles.ts";
import { BUNDLE_VARIABLES_HEADER } from "../../contract/headers.ts";
import { z } from "zod";
import { BUNDLE_LIMITS } from "../../environments/bundle/layout.ts";
import { installBundle } from "../../environments/bundle/install.ts";
import { packEnvironment } from "../../environments/bundle/pack.ts";
import { StationError } from "../../errors.ts";
import { formatBytes } from "../../files/size.ts";
import { log } from "../../log.ts";
import type { StationContext } from "../../context.ts";
import { catalogueTools } from "../../environments/status.ts";
import { syncWholeEnvironment } from "../../environments/sync.ts";
import { errors, json, openapi, router } from "../openapi.ts";
import { hex } from "../../lib/hex.ts";

/**
 * /api/v1/bundles: an environment packed as a .tar.gz (agents, MCP configs, workflows and a manifest
 * with checksums; never variables.yml), and installing one — checked whole before a byte is written,
 * then synced: its MCP servers start only once approved (`trust=true`, or `stn mcp approve` later).
 */

const tags = ["bundles"];
const GZIP = "application/gzip";

const create = createRoute({
  method: "post",
  path: "/",
  tags,
  summary: "Pack an environment into a bundle (.tar.gz) and download it",
  request: { body: { content: { "application/json": { schema: CreateBundleBody } } } },
  responses: {
    200: {
      description: "the bundle; X-Bundle-Sha256 carries the archive's SHA-256",
      content: { [GZIP]: { schema: { type: "string", format: "binary" } } },
    },
    ...errors(
      "invalid_json",
      "invalid_request",
      "invalid_environment",
      "environment_not_found",
      "bundle_secret",
      "bundle_too_large",
      "unsafe_path",
      "agent_invalid",
    ),
  },
});
const install = createRoute({
  method: "post",
  path: "/install",
  tags,
  summary: "Install a bundle (the .tar.gz as the body) into an environment, then sync it",
  request: {
    query: InstallBundleQuery,
    headers: z.object({
      [BUNDLE_VARIABLES_HEADER]: z.string().optional().describe(
        "values for the variables its MCP configs use, as a JSON object NAME → value (kept out of the URL); " +
          "written into the environment's variables.yml",
      ),
    }),
    body: { required: true, content: { [GZIP]: { schema: { type: "string", format: "binary" } } } },
  },
  responses: {
    201: json(InstallResult, "installed into a new environment, and synced"),
    200: json(InstallResult, "installed over an existing environment (force), and synced"),
    ...errors(
      "invalid_request",
      "invalid_environment",
      "environment_exists",
      "bundle_conflict",
      "bundle_variables_missing",
      "bundle_manifest_mismatch",
      "bundle_invalid",
      "bundle_too_large",
      "unsafe_path",
    ),
  },
});

/** Reads the request body, refusing it with 413 as soon as it passes the bundle size limit. */
async function readBundleBody(body: ReadableStream<Uint8Array> | null): Promise<Uint8Array> {
  const max = BUNDLE_LIMITS.maxCompressedBytes;
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body ?? []) {
    size += chunk.length;
    if (size > max) {
      throw new StationError("bundle_too_large", `the bundle is over ${formatBytes(max)}`, {
        hint: "a bundle carries agents, MCP configs and workflows: text files, far below this limit",
      });
    }
    chunks.push(chunk);
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) bytes.set(c, at), at += c.length;
  return bytes;
}

/** The variables header's JSON object of strings; 400 `invalid_request` when it is anything else. */
function variablesHeader(raw: string | undefined): Record<string, string> | undefined {
  if (raw === undefined) return undefined;
  const parsed = z.record(z.string(), z.string()).safeParse((() => {
    try {
      return JSON.parse(raw);
    } catch {
      return undefined;
    }
  })());
  if (!parsed.success) {
    throw new StationError("invalid_request", `${BUNDLE_VARIABLES_HEADER} is not a JSON object of strings`, {
      hint: '{"NAME": "value", …}',
    });
  }
  return parsed.data;
}

/** The bundle routes, mounted at /api/v1/bundles. */
export function bundleRoutes(ctx: StationContext): OpenAPIHono {
  const app = router();
  const dir = ctx.config.paths.environments;
  openapi(app, create, async (c) => {
    const { environment, version, description } = c.req.valid("json");
    const packed = await packEnvironment(dir, environment, {
      version,
      description,
      knownTools: catalogueTools(ctx.db, environment),
    });
    const sha = new Uint8Array(await crypto.subtle.digest("SHA-256", packed.bytes as BufferSource));
    log.info("bundle created", { environment, files: packed.manifest.files.length });
    return c.body(packed.bytes as Uint8Array<ArrayBuffer>, 200, {
      "content-type": GZIP,
      "content-disposition": `attachment; filename="${environment}.tar.gz"`,
      "x-bundle-sha256": hex(sha),
    });
  });
  openapi(app, install, async (c) => {
    const query = c.req.valid("query");
    const variables = variablesHeader(c.req.valid("header")[BUNDLE_VARIABLES_HEADER]);
    const bytes = await readBundleBody(c.req.raw.body);
    const installed = await installBundle(dir, bytes, {
      environment: query.environment,
      force: query.force === "true",
      variables,
      requireVariables: query.require_variables === "true",
      storedWorkflow: (id) => {
        if (!ctx.workflows.has(id)) return undefined;
        const { version, source, environment } = ctx.workflows.record(id);
        return { id, version, source, environment };
      },
    });
    log.info("bundle installed", {
      environment: installed.environment,
      files: installed.files.length,
      missing_variables: installed.missing.length,
    });
    const sync = await syncWholeEnvironment(installed.environment, {
      db: ctx.db,
      workflows: ctx.workflows,
      environmentsDir: dir,
      trust: query.trust === "true",
      sandbox: ctx.config.values.sandbox,
    });
    return c.json({ ...installed, sync }, installed.created ? 201 : 200);
  }, { body: "raw" });
  return app;
}
