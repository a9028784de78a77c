import { StationError } from "../errors.ts";
import { log } from "../log.ts";
import type { McpConnection, McpRequestOptions } from "./client/mod.ts";

/**
 * The MCP server connections a station keeps across agent runs (issue 36): per environment and server,
 * up to `max` connections (processes, for stdio) started on first use, shared by every run that leases
 * the server, closed after `idleMs` without a lease or a call. A connection that dies is dropped: its
 * calls in flight fail (the call may have had effects, so nothing retries it), and the next call starts
 * a new one. A lease under a different key (the config was synced anew, or its placeholder values
 * changed) retires the old connections: they close once their last lease is released.
 */

/** Settings of a pool (config `mcp.pool_max`, `mcp.idle_timeout`). */
export interface McpPoolSettings {
  /** Connections (processes) per server at most; one more starts only while all are busy. */
  max: number;
  /** Close a server's connections after this long without a lease or a call. */
  idleMs: number;
}

/** A connection of a slot, with its calls in flight. */
interface Member {
  conn: McpConnection;
  busy: number;
  dead: boolean;
}

/** One server's connections under one key. */
interface Slot {
  id: string;
  key: string;
  members: Member[];
  starting: Promise<Member> | null;
  leases: number;
  retired: boolean;
  idle?: ReturnType<typeof setTimeout>;
}

/** A server as a pool hands it to a run: calls go to a shared connection; release() ends the lease. */
export interface McpLease {
  callTool(name: string, args: unknown, options?: McpRequestOptions): Promise<string>;
  release(): void;
}

/** What a lease needs to start a connection when none is usable. */
export interface LeaseRequest {
  environment: string;
  server: string;
  /** Changes when what would be started changes (config checksum and rendered spec). */
  key: string;
  start: () => Promise<McpConnection>;
  /** Aborts this run's wait for a starting connection (the start goes on for others). */
  signal?: AbortSignal;
}

/** Waits for `p`, or rejects when `signal` aborts. */
function raced<T>(p: Promise<T>, signal: AbortSignal | undefined, what: string): Promise<T> {
  if (!signal) return p;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new StationError("canceled", `${what} was canceled`));
    if (signal.aborted) return onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/** Shared MCP server connections of a station. */
export class McpPool {
  #slots = new Map<string, Slot>();
  #retired = new Set<Slot>();
  #closed = false;

  constructor(readonly settings: McpPoolSettings) {}

  /** Leases a server: its first connection is started now when none is up (a start failure is thrown). */
  async lease(req: LeaseRequest): Promise<McpLease> {
    if (this.#closed) throw new StationError("shutdown", "the station is stopping");
    const id = `${req.environment}\u0000${req.server}`;
    let slot = this.#slots.get(id);
    if (slot && slot.key !== req.key) {
      this.#retire(slot);
      slot = undefined;
    }
    if (!slot) {
      slot = { id, key: req.key, members: [], starting: null, leases: 0, retired: false };
      this.#slots.set(id, slot);
    }
    const s = slot;
    s.leases++;
    this.#touch(s);
    try {
      if (!s.members.some((m) => !m.dead)) {
        await raced(this.#start(s, req), req.signal, `starting ${req.server}`);
      }
    } catch (err) {
      this.#release(s);
      throw err;
    }
    let released = false;
    return {
      callTool: (name, args, options) => this.#call(s, req, { name, args, options }),
      release: () => {
        if (!released) this.#release(s);
        released = true;
      },
    };
  }

  /** Stops sharing a server (its entry now says `per_run`): its connections close with their last lease. */
  drop(environment: string, server: string): void {
    const slot = this.#slots.get(`${environment}\u0000${server}`);
    if (slot) this.#retire(slot);
  }

  /** Connections up now, per `environment/server` (for tests and status). */
  counts(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const s of [...this.#slots.values(), ...this.#retired]) {
      const name = s.id.replace("\u0000", "/");
      out[name] = (out[name] ?? 0) + s.members.filter((m) => !m.dead).length;
    }
    return out;
  }

  /** Closes every connection; later leases fail. */
  async close(): Promise<void> {
    this.#closed = true;
    const all = [...this.#slots.values(), ...this.#retired];
    this.#slots.clear();
    this.#retired.clear();
    await Promise.allSettled(all.map((s) => this.#closeSlot(s)));
  }

  async #call(s: Slot, req: LeaseRequest, c: { name: string; args: unknown; options?: McpRequestOptions }) {
    const member = await raced(this.#pick(s, req), c.options?.signal, `tool ${c.name}`);
    member.busy++;
    this.#touch(s);
    try {
      return await member.conn.callTool(c.name, c.args, c.options);
    } catch (err) {
      if (member.dead && !c.options?.signal?.aborted) {
        throw new StationError(
          "mcp_call_failed",
          `tool ${c.name}: MCP server ${req.server} stopped during the call${
            member.conn.stderr() ? ` (its stderr ends with: ${member.conn.stderr().slice(-500)})` : ""
          }`,
          {
            hint:
              "stn starts the server again for the next call; the call may have had effects, so it is not repeated",
          },
        );
      }
      throw err;
    } finally {
      member.busy--;
      this.#touch(s);
    }
  }

  /** The least busy live connection; a new one when all are busy (or none is up) and the slot has room. */
  async #pick(s: Slot, req: LeaseRequest): Promise<Member> {
    const live = s.members.filter((m) => !m.dead).sort((a, b) => a.busy - b.busy);
    if (live.length > 0 && (live[0].busy === 0 || live.length >= this.settings.max || s.retired)) {
      return live[0];
    }
    if (live.length > 0 && s.starting) return live[0];
    return await this.#start(s, req);
  }

  /** Starts one connection for the slot (one start at a time; concurrent callers share it). */
  #start(s: Slot, req: LeaseRequest): Promise<Member> {
    if (s.starting) return s.starting;
    s.starting = (async () => {
      const conn = await req.start();
      const member: Member = { conn, busy: 0, dead: false };
      s.members.push(member);
      conn.closed.then(() => {
        member.dead = true;
        s.members = s.members.filter((m) => m !== member);
        if (!s.retired && !this.#closed) log.debug(`mcp server ${req.server} (${req.environment}) stopped`);
      });
      if (this.#closed || (s.retired && s.leases === 0)) await this.#closeSlot(s);
      return member;
    })().finally(() => (s.starting = null));
    return s.starting;
  }

  #release(s: Slot): void {
    s.leases--;
    if (s.retired && s.leases === 0) {
      this.#retired.delete(s);
      void this.#closeSlot(s);
    } else this.#touch(s);
  }

  /** Restarts the idle clock: a slot with no lease and no call closes after idleMs. */
  #touch(s: Slot): void {
    clearTimeout(s.idle);
    if (s.leases > 0 || s.members.some((m) => m.busy > 0) || s.retired) return;
    s.idle = setTimeout(() => {
      if (this.#slots.get(s.id) === s) this.#slots.delete(s.id);
      void this.#closeSlot(s);
    }, this.settings.idleMs);
    // An idle server must not keep a one-shot command alive.
    Deno.unrefTimer(s.idle);
  }

  #retire(s: Slot): void {
    s.retired = true;
    clearTimeout(s.idle);
    this.#slots.delete(s.id);
    if (s.leases === 0) void this.#closeSlot(s);
    else this.#retired.add(s);
  }

  async #closeSlot(s: Slot): Promise<void> {
    clearTimeout(s.idle);
    const members = s.members;
    s.members = [];
    await Promise.allSettled(members.map((m) => ((m.dead = true), m.conn.close())));
  }
}
