/** The prepared-statement cache every ledger module shares (the engine, agent runs, webhooks, schedules). */

import type { Database } from "./database.ts";

/** Prepared statements over one connection, prepared once (the engine's hot path reuses them). */
export class Statements {
  readonly db: Database;
  #cache = new Map<string, ReturnType<Database["prepare"]>>();

  constructor(db: Database) {
    this.db = db;
  }

  #q(sql: string) {
    let s = this.#cache.get(sql);
    if (!s) this.#cache.set(sql, s = this.db.prepare(sql));
    return s;
  }

  /** Runs a statement; returns the number of rows changed. */
  run(sql: string, ...params: unknown[]): number {
    return Number(this.#q(sql).run(...(params as never[])).changes);
  }

  /** Inserts a row and returns its rowid. */
  insert(sql: string, ...params: unknown[]): number {
    return Number(this.#q(sql).run(...(params as never[])).lastInsertRowid);
  }

  /** One row or undefined. */
  get<T>(sql: string, ...params: unknown[]): T | undefined {
    return this.#q(sql).get(...(params as never[])) as T | undefined;
  }

  /** All rows. */
  all<T>(sql: string, ...params: unknown[]): T[] {
    return this.#q(sql).all(...(params as never[])) as T[];
  }
}
