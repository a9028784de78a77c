/**
 * A `stn faker` session: the tools it served and every call with the answer it gave, kept as one JSON-lines
 * file per session under $STATION_HOME/faker/sessions (docs/faker.md#sessions), private to the user. Files
 * only stn writes, append-only: the session's header at its first call, then one line per call and one when
 * it ends, so recording a call costs the same however long the session is. A line cut short by a crash is
 * the last one, and reading leaves it out.
 */

import { join } from "node:path";
import { z } from "zod";
import { errorMessage, StationError } from "../errors.ts";
import { randomHex } from "../lib/hex.ts";
import { createPrivateFile, makePrivateDir } from "../lib/private_files.ts";

/** A tool result as MCP carries it (content blocks as the server sent them). */
export const FakerResult = z.object({
  content: z.array(z.record(z.string(), z.unknown())),
  structured_content: z.record(z.string(), z.unknown()).optional(),
  is_error: z.boolean().optional(),
});
export type FakerResult = z.infer<typeof FakerResult>;

/** A tool as the session served it. */
export const FakerTool = z.object({
  name: z.string(),
  description: z.string(),
  input_schema: z.record(z.string(), z.unknown()),
  output_schema: z.record(z.string(), z.unknown()).optional(),
});
export type FakerTool = z.infer<typeof FakerTool>;

/** One tools/call and what the faker answered. */
export const FakerCall = z.object({
  seq: z.int().min(1),
  tool: z.string(),
  args: z.record(z.string(), z.unknown()),
  at: z.string().describe("when the call came (ISO 8601)"),
  duration_ms: z.int().min(0),
  /**
   * real: the real server's answer (or its failure) passed on; generated: the model's data; refused: a
   * standalone call whose arguments its input schema does not allow.
   */
  source: z.enum(["real", "generated", "refused"]),
  /** The real server's answer when it was asked and the client got generated data instead. */
  real: FakerResult.optional(),
  /** Why the real call failed (no answer came), or why a standalone call was refused. */
  real_error: z.string().optional(),
  answer: FakerResult,
  /** The generation's model and tokens, for generated answers. */
  model: z.string().optional(),
  input_tokens: z.int().min(0).optional(),
  output_tokens: z.int().min(0).optional(),
});
export type FakerCall = z.infer<typeof FakerCall>;

/** A session file. */
export const FakerSession = z.object({
  id: z.string(),
  /** passthrough: real answers; ai: generated from the real server's; standalone: generated, no server. */
  mode: z.enum(["passthrough", "ai", "standalone"]),
  /** The server it fronted: its command and arguments, its environment's names (never their values). */
  server: z.object({ command: z.string(), args: z.array(z.string()), env_keys: z.array(z.string()) })
    .optional(),
  /** The tools file of a standalone session. */
  tools_file: z.string().optional(),
  name: z.string().describe("the server's name in the MCP handshake"),
  instruction: z.string().optional(),
  model: z.string().optional(),
  started_at: z.string(),
  ended_at: z.string().optional(),
  tools: z.array(FakerTool),
  calls: z.array(FakerCall),
});
export type FakerSession = z.infer<typeof FakerSession>;

/** A session as `stn faker sessions list` shows it. */
export interface SessionSummary {
  id: string;
  mode: FakerSession["mode"];
  name: string;
  started_at: string;
  ended_at: string | null;
  calls: number;
  tools: number;
}

const ID = /^faker-\d{8}-\d{6}-[0-9a-f]{6}$/;

/** The folder of session files under a station home. */
export function sessionsDir(home: string): string {
  return join(home, "faker", "sessions");
}

/** A new session id: `faker-YYYYMMDD-HHMMSS-<6 hex>` (sorts by start time). */
export function newSessionId(now: Date): string {
  const stamp = now.toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
  return `faker-${stamp}-${randomHex(3)}`;
}

/** The format version a session file's first line carries (`stn_faker_session: 1`). */
const FORMAT = 1;

/**
 * The recorder of one running session. Its file is created at the first call (a client that only lists the
 * tools leaves none); lines are appended one at a time, in order, so concurrent calls never interleave.
 */
export class SessionRecorder {
  readonly session: FakerSession;
  readonly path: string;
  #chain: Promise<void> = Promise.resolve();
  #dir: string;

  constructor(home: string, session: FakerSession) {
    this.session = session;
    this.#dir = sessionsDir(home);
    this.path = join(this.#dir, `${session.id}.jsonl`);
  }

  /** Records a finished call (its seq is assigned here); resolves once its line is written. */
  record(call: Omit<FakerCall, "seq">): Promise<void> {
    const numbered = { seq: this.session.calls.length + 1, ...call };
    this.session.calls.push(numbered);
    return this.#append(numbered.seq === 1 ? [this.#header(), { call: numbered }] : [{ call: numbered }]);
  }

  /** Records the session's end, when it recorded any call. */
  end(): Promise<void> {
    if (this.session.calls.length === 0) return this.#chain;
    this.session.ended_at = new Date().toISOString();
    return this.#append([{ ended_at: this.session.ended_at }]);
  }

  #header(): Record<string, unknown> {
    const { calls: _, ended_at: _end, ...header } = this.session;
    return { stn_faker_session: FORMAT, ...header };
  }

  #append(lines: Record<string, unknown>[]): Promise<void> {
    const text = lines.map((l) => JSON.stringify(l) + "\n").join("");
    this.#chain = this.#chain.then(async () => {
      if (!text.includes('"stn_faker_session"')) {
        return await Deno.writeTextFile(this.path, text, { append: true });
      }
      makePrivateDir(this.#dir);
      createPrivateFile(this.path);
      await Deno.writeTextFile(this.path, text, { append: true });
    });
    return this.#chain;
  }
}

/** The lines of a session file as a session: a last line cut short is left out. */
function sessionOf(text: string): unknown {
  const lines = text.split("\n").filter((l) => l.trim());
  const parsed: Record<string, unknown>[] = [];
  lines.forEach((line, i) => {
    try {
      parsed.push(JSON.parse(line));
    } catch (err) {
      if (i < lines.length - 1) throw new Error(`line ${i + 1}: ${errorMessage(err)}`);
    }
  });
  const [head, ...rest] = parsed;
  if (head?.stn_faker_session !== FORMAT) throw new Error(`line 1 is not a stn faker session header`);
  const { stn_faker_session: _, ...header } = head;
  const end = rest.find((l) => "ended_at" in l);
  return {
    ...header,
    ...(end && { ended_at: end.ended_at }),
    calls: rest.filter((l) => "call" in l).map((l) => l.call),
  };
}

function notFound(id: string): StationError {
  return new StationError("faker_session_not_found", `no faker session ${id}`, {
    status: 404,
    hint: "`stn faker sessions list` lists the sessions of this STATION_HOME",
  });
}

/** Reads one session; an unknown id is `faker_session_not_found`, an unreadable file `faker_session_invalid`. */
export async function readSession(home: string, id: string): Promise<FakerSession> {
  if (!ID.test(id)) throw notFound(id);
  const path = join(sessionsDir(home), `${id}.jsonl`);
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) throw notFound(id);
    throw new StationError("faker_session_invalid", `cannot read ${path}: ${errorMessage(err)}`);
  }
  let data: unknown;
  try {
    data = sessionOf(text);
  } catch (err) {
    throw new StationError("faker_session_invalid", `${path}: ${errorMessage(err)}`);
  }
  const parsed = FakerSession.safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new StationError(
      "faker_session_invalid",
      `${path}: ${issue.path.join(".") || "(top)"}: ${issue.message}`,
      { hint: "session files are written by `stn faker`; one edited by hand may no longer read" },
    );
  }
  return parsed.data;
}

/** Every session of a station home, newest first (a file that does not read is left out). */
export async function listSessions(home: string): Promise<SessionSummary[]> {
  const ids: string[] = [];
  try {
    for await (const e of Deno.readDir(sessionsDir(home))) {
      const id = e.name.replace(/\.jsonl$/, "");
      if (e.isFile && e.name.endsWith(".jsonl") && ID.test(id)) ids.push(id);
    }
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return [];
    throw err;
  }
  const out: SessionSummary[] = [];
  for (const id of ids.sort().reverse()) {
    const s = await readSession(home, id).catch(() => undefined);
    if (!s) continue;
    out.push({
      id: s.id,
      mode: s.mode,
      name: s.name,
      started_at: s.started_at,
      ended_at: s.ended_at ?? null,
      calls: s.calls.length,
      tools: s.tools.length,
    });
  }
  return out;
}
