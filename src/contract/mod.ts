/**
 * The API contract: zod schemas of every request and response, shared by the routes (which validate
 * with them and generate the OpenAPI document from them) and the client (which parses answers with them).
 * Nothing here imports the server.
 */
export * from "./agents.ts";
export * from "./agent_runs.ts";
export * from "./approvals.ts";
export * from "./errors.ts";
export * from "./events.ts";
export * from "./files.ts";
export * from "./health.ts";
export * from "./runs.ts";
export * from "./sandboxes.ts";
export * from "./sync.ts";
export * from "./workflows.ts";
export * from "./bundles.ts";
export * from "./environments.ts";
export * from "./workers.ts";
export * from "./idempotency.ts";
export * from "./cassette.ts";
export * from "./evals.ts";
export * from "./reruns.ts";
