/**
 * A scripted provider that keeps limits of its own, as a real one does per API key: above `requests_per_minute`
 * accepted requests in any trailing 60 s it answers 429 with `Retry-After`. It records what it served (when,
 * for which key, how many tokens it reported) and the most requests it had in flight, so a test or benchmark
 * can check stn's `ai.limits` from the provider's side.
 */

import { sleep } from "../../src/lib/async.ts";
import { type ModelServer, startModelServer } from "./model_server.ts";

const MINUTE = 60_000;

/** One request the provider served. */
export interface Served {
  at: number;
  key: string;
  tokens: number;
}

export interface LimitedModel {
  server: ModelServer;
  served: Served[];
  /** Requests answered 429 (over the provider's rate). */
  refused(): number;
  /** The most requests answered at once. */
  maxInFlight(): number;
  close(): Promise<void>;
}

/** Options of the provider: its own rate per API key, how long each answer takes, the usage it reports. */
export interface LimitedModelOptions {
  requestsPerMinute?: number;
  holdMs?: number;
  usage?: { input: number; output: number };
  text?: string;
}

/** Starts the provider on a free loopback port. */
export function startLimitedModel(o: LimitedModelOptions = {}): LimitedModel {
  const server = startModelServer();
  const served: Served[] = [];
  let refused = 0;
  let inFlight = 0;
  let maxInFlight = 0;
  const usage = o.usage ?? { input: 10, output: 5 };
  server.route((req) => {
    const now = Date.now();
    if (o.requestsPerMinute !== undefined) {
      const recent = served.filter((s) => s.key === req.api_key && s.at > now - MINUTE);
      if (recent.length >= o.requestsPerMinute) {
        refused++;
        const secs = Math.max(1, Math.ceil((recent[0].at + MINUTE - now) / 1000));
        return { status: 429, text: "rate limit reached", headers: { "retry-after": String(secs) } };
      }
    }
    served.push({ at: now, key: req.api_key, tokens: usage.input + usage.output });
    maxInFlight = Math.max(maxInFlight, ++inFlight);
    const hold = sleep(o.holdMs ?? 0).finally(() => inFlight--);
    return { text: o.text ?? "done", usage, hold };
  });
  return {
    server,
    served,
    refused: () => refused,
    maxInFlight: () => maxInFlight,
    close: () => server.close(),
  };
}

/** The most requests (or tokens) served for one key within any 60 s window. */
export function maxPerMinute(served: Served[], measure: "requests" | "tokens"): number {
  const sorted = [...served].sort((a, b) => a.at - b.at);
  let best = 0;
  for (const key of new Set(sorted.map((s) => s.key))) {
    const mine = sorted.filter((s) => s.key === key);
    let sum = 0;
    for (let i = 0, j = 0; j < mine.length; j++) {
      sum += measure === "requests" ? 1 : mine[j].tokens;
      for (; mine[j].at - mine[i].at >= MINUTE; i++) sum -= measure === "requests" ? 1 : mine[i].tokens;
      best = Math.max(best, sum);
    }
  }
  return best;
}
