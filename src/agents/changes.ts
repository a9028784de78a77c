import type { Database } from "../db/database.ts";

/**
 * Who wants to know when `stn sync` changed a database's agents (the agent MCP server's `agent_<name>`
 * tools follow them). Keyed by the database, since the agents table is the one source of agents.
 */
const listeners = new WeakMap<Database, Set<() => void>>();

/** Calls `listener` after each sync that created, changed or deleted agents of `db`; returns the unsubscribe. */
export function onAgentsChange(db: Database, listener: () => void): () => void {
  const set = listeners.get(db) ?? new Set();
  listeners.set(db, set);
  set.add(listener);
  return () => set.delete(listener);
}

/** Tells the listeners of `db` that its agents changed. */
export function agentsChanged(db: Database): void {
  for (const listener of listeners.get(db) ?? []) listener();
}
