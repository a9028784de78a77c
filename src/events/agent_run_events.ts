import type { AgentLedger } from "../agents/ledger.ts";
import { runEnded } from "../agents/run_rows.ts";
import type { AgentRunEvent } from "../contract/agent_runs.ts";
import { followEvents, type FollowFrom } from "./follow.ts";

/** An agent run's events after `after`, then live ones, ending after its terminal event (see followEvents). */
export async function* followAgentRunEvents(
  ledger: AgentLedger,
  runId: string,
  { after, signal, live = true }: FollowFrom,
): AsyncGenerator<AgentRunEvent> {
  const log = {
    after: (seq: number) => ledger.eventsAfter(runId, seq),
    lastSeq: () => ledger.lastSeq(runId),
    ended: () => {
      const status = ledger.get(runId)?.status;
      return status === undefined || runEnded(status);
    },
    watch: (fn: () => void) => ledger.watch(runId, fn),
  };
  for await (const e of followEvents(log, after, signal, live)) {
    yield { seq: e.seq, type: e.type, data: e.data === null ? null : JSON.parse(e.data), time: e.time };
  }
}
