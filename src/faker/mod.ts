/** `stn faker` (docs/faker.md): the MCP proxy that fakes tool answers, its sessions, their export as a mock spec. */
export { sessionSpec } from "./export.ts";
export { type FakerFlags, runFaker } from "./run.ts";
export { type FakerSession, listSessions, readSession, sessionsDir, type SessionSummary } from "./session.ts";
export { type FakerTemplate, templates } from "./templates.ts";
