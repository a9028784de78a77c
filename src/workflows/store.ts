/** WorkflowStore: stored workflow definitions and their numbered, content-hashed versions. */

import { type Database, transaction } from "../db/database.ts";
import { contentHash } from "../lib/canonical_json.ts";
import { errorMessage, StationError } from "../errors.ts";
import type { WorkflowDefinition } from "./definition/schema.ts";

/**
 * Stored workflow definitions (issue 3 "Storage"). A new numbered version is written only when the
 * normalised content changes (by hash), so re-saving or re-syncing the same definition creates
 * nothing — whatever its free-form `version:` label says.
 */

/** Where a workflow's latest version came from. */
export interface WorkflowOrigin {
  source: "api" | "file";
  /** For `file`: the environment whose `workflows/` folder holds it. */
  environment?: string;
  /** For `file`: the file it was read from. */
  path?: string;
}

/** Why a workflow is disabled. */
export type DisabledReason = "user" | "file_removed";

/** A workflow and its latest version number. */
export interface WorkflowRecord {
  id: string;
  name: string | null;
  description: string | null;
  status: "active" | "disabled";
  /** Why it is disabled: by a user (kept through syncs), or because its file was removed. */
  disabled_reason: DisabledReason | null;
  version: number;
  source: "api" | "file";
  environment: string | null;
  source_path: string | null;
  created_at: string;
  updated_at: string;
}

/** One stored version of a workflow. */
export interface WorkflowVersion {
  workflow_id: string;
  version: number;
  hash: string;
  label: string | null;
  created_at: string;
  definition: WorkflowDefinition;
}

/** What save() did. */
export interface SaveResult {
  workflow: WorkflowRecord;
  version: number;
  /** `created`: new workflow; `updated`: new version; `unchanged`: same content as the latest version. */
  outcome: "created" | "updated" | "unchanged";
  /**
   * True when this save re-enabled a disabled workflow: an API save always does; a file sync only when
   * the workflow was disabled because its file had been removed (a user's disable stands).
   */
  enabled: boolean;
}

/** The content hash of a normalised definition. */
export function definitionHash(def: WorkflowDefinition): string {
  return contentHash(def);
}

type Row = Record<string, unknown>;

function toRecord(r: Row): WorkflowRecord {
  return {
    id: r.id as string,
    name: (r.name as string | null) ?? null,
    description: (r.description as string | null) ?? null,
    status: r.status as WorkflowRecord["status"],
    disabled_reason: (r.disabled_reason as DisabledReason | null) ?? null,
    version: Number(r.latest_version),
    source: r.source as WorkflowRecord["source"],
    environment: (r.environment as string | null) ?? null,
    source_path: (r.source_path as string | null) ?? null,
    created_at: r.created_at as string,
    updated_at: r.updated_at as string,
  };
}

function toVersion(r: Row): WorkflowVersion {
  return {
    workflow_id: r.workflow_id as string,
    version: Number(r.version),
    hash: r.hash as string,
    label: (r.label as string | null) ?? null,
    created_at: r.created_at as string,
    definition: JSON.parse(r.definition as string),
  };
}

function notFound(id: string): StationError {
  return new StationError("workflow_not_found", `no workflow \`${id}\``, {
    status: 404,
    hint: "`stn workflow list` shows the stored workflows",
  });
}

/** The workflows table and its versions. */
export class WorkflowStore {
  #listeners = new Set<() => void>();

  constructor(private readonly db: Database) {}

  /** Calls `listener` after each change to the stored workflows (the agent MCP server's tools follow them). */
  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  private changed<T>(result: T): T {
    for (const listener of this.#listeners) listener();
    return result;
  }

  /** Stores a validated definition: a new version when its content changed, and marks it active. */
  save(def: WorkflowDefinition, origin: WorkflowOrigin): SaveResult {
    const hash = definitionHash(def);
    const now = new Date().toISOString();
    const label = def.version === undefined ? null : String(def.version);
    return this.changed(transaction(this.db, () => {
      const row = this.db.prepare("SELECT * FROM workflows WHERE id = ?").get(def.id) as Row | undefined;
      const origin_ = [origin.source, origin.environment ?? null, origin.path ?? null] as const;
      if (!row) {
        this.db.prepare(
          `INSERT INTO workflows (id, name, description, status, latest_version, source, environment, source_path,
             created_at, updated_at) VALUES (?, ?, ?, 'active', 1, ?, ?, ?, ?, ?)`,
        ).run(def.id, def.name ?? null, def.description ?? null, ...origin_, now, now);
        this.insertVersion(def, { version: 1, hash, label, now });
        return { workflow: this.record(def.id), version: 1, outcome: "created", enabled: false };
      }
      const current = toRecord(row);
      const latest = this.db.prepare(
        "SELECT hash FROM workflow_versions WHERE workflow_id = ? AND version = ?",
      )
        .get(def.id, current.version) as { hash: string } | undefined;
      const activate = origin.source === "api" || current.disabled_reason !== "user";
      const enabled = current.status === "disabled" && activate;
      const status = activate ? "active" : current.status;
      const reason = status === "active" ? null : current.disabled_reason;
      const statusChange = enabled ? now : current.updated_at;
      if (latest?.hash === hash) {
        this.db.prepare(
          `UPDATE workflows SET status = ?, disabled_reason = ?, source = ?, environment = ?, source_path = ?,
             updated_at = ? WHERE id = ?`,
        ).run(status, reason, ...origin_, statusChange, def.id);
        return { workflow: this.record(def.id), version: current.version, outcome: "unchanged", enabled };
      }
      const version = current.version + 1;
      this.insertVersion(def, { version, hash, label, now });
      this.db.prepare(
        `UPDATE workflows SET name = ?, description = ?, status = ?, disabled_reason = ?, latest_version = ?,
           source = ?, environment = ?, source_path = ?, updated_at = ? WHERE id = ?`,
      ).run(def.name ?? null, def.description ?? null, status, reason, version, ...origin_, now, def.id);
      return { workflow: this.record(def.id), version, outcome: "updated", enabled };
    }));
  }

  private insertVersion(
    def: WorkflowDefinition,
    { version, hash, label, now }: { version: number; hash: string; label: string | null; now: string },
  ) {
    this.db.prepare(
      `INSERT INTO workflow_versions (workflow_id, version, hash, definition, label, created_at)
         VALUES (?, ?, ?, ?, ?, ?)`,
    ).run(def.id, version, hash, JSON.stringify(def), label, now);
  }

  /** A workflow's record; throws `workflow_not_found` (404). */
  record(id: string): WorkflowRecord {
    const row = this.db.prepare("SELECT * FROM workflows WHERE id = ?").get(id) as Row | undefined;
    if (!row) throw notFound(id);
    return toRecord(row);
  }

  /** True when a workflow with this id is stored. */
  has(id: string): boolean {
    return this.db.prepare("SELECT 1 FROM workflows WHERE id = ?").get(id) !== undefined;
  }

  /** One version (default: the latest) with its definition; throws 404 codes when absent. */
  get(id: string, version?: number): WorkflowVersion {
    const record = this.record(id);
    const n = version ?? record.version;
    const row = this.db.prepare("SELECT * FROM workflow_versions WHERE workflow_id = ? AND version = ?")
      .get(id, n) as Row | undefined;
    if (!row) {
      throw new StationError("workflow_version_not_found", `workflow \`${id}\` has no version ${n}`, {
        status: 404,
        hint: `its versions are 1…${record.version} (\`stn workflow show ${id}\` lists them)`,
      });
    }
    return toVersion(row);
  }

  /** Every version of a workflow, oldest first (definitions omitted). */
  versions(id: string): Omit<WorkflowVersion, "definition">[] {
    this.record(id);
    const rows = this.db.prepare(
      "SELECT workflow_id, version, hash, label, created_at FROM workflow_versions WHERE workflow_id = ? ORDER BY version",
    ).all(id) as Row[];
    return rows.map((r) => ({
      workflow_id: r.workflow_id as string,
      version: Number(r.version),
      hash: r.hash as string,
      label: (r.label as string | null) ?? null,
      created_at: r.created_at as string,
    }));
  }

  /** Workflows, by id; optionally only one status, or only those synced from one environment's files. */
  list(filter: { status?: "active" | "disabled"; environment?: string } = {}): WorkflowRecord[] {
    const where: string[] = [];
    const args: string[] = [];
    if (filter.status) where.push("status = ?"), args.push(filter.status);
    if (filter.environment !== undefined) {
      where.push("source = 'file' AND environment = ?"), args.push(filter.environment);
    }
    const sql = `SELECT * FROM workflows ${where.length ? "WHERE " + where.join(" AND ") : ""} ORDER BY id`;
    return (this.db.prepare(sql).all(...args) as Row[]).map(toRecord);
  }

  /** Marks a workflow disabled (kept, with its versions; new runs are refused). */
  disable(id: string, reason: DisabledReason = "user"): WorkflowRecord {
    this.record(id);
    this.db.prepare(
      `UPDATE workflows SET status = 'disabled', disabled_reason = ?,
         updated_at = CASE WHEN status = 'disabled' THEN updated_at ELSE ? END WHERE id = ?`,
    ).run(reason, new Date().toISOString(), id);
    return this.changed(this.record(id));
  }

  /** Marks a workflow active again. */
  enable(id: string): WorkflowRecord {
    this.record(id);
    this.db.prepare(
      `UPDATE workflows SET status = 'active', disabled_reason = NULL,
         updated_at = CASE WHEN status = 'active' THEN updated_at ELSE ? END WHERE id = ?`,
    ).run(new Date().toISOString(), id);
    return this.changed(this.record(id));
  }

  /** Deletes a workflow and all its versions; refused (409) while something still references it. */
  delete(id: string): void {
    this.record(id);
    try {
      this.db.prepare("DELETE FROM workflows WHERE id = ?").run(id);
      this.changed(undefined);
    } catch (err) {
      if (/FOREIGN KEY/i.test(errorMessage(err))) {
        throw new StationError("workflow_in_use", `workflow \`${id}\` still has runs and cannot be deleted`, {
          status: 409,
          hint: "disable it instead (`stn workflow delete` without --force), or delete its runs first",
        });
      }
      throw err;
    }
  }
}
