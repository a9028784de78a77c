/** Replaying a cassette: a Models that answers model calls from the recording, and the recorded tool results. */

import { type AiConfig, modelIdOf, type Models } from "../agents/providers.ts";
import { RunFailure } from "../agents/loop.ts";
import type { Cassette, CassetteRun, ToolEvent } from "./cassette.ts";
import { requestLines } from "./cassette.ts";
import { lineDiff } from "./diff.ts";
import type { RunIdentity } from "./doubles.ts";
import { doubledModel, generateResult, modelRequest } from "./model_calls.ts";
import { masker } from "../environments/placeholders.ts";
import { maskStrings } from "./record.ts";

/** `strict`: each request must equal the recorded one; `loose`: answers by order only. */
export type MatchMode = "strict" | "loose";

interface Playing {
  run: CassetteRun;
  /** Index of the next model event to answer. */
  model: number;
  /** Per tool name, how many of its recorded calls were answered. */
  tools: Map<string, number>;
}

/**
 * A cassette being replayed. Each agent run takes the recording with its key (RunIdentity.key), else the
 * next unplayed recording of the same agent; its model calls are answered in order from
 * it, and — strict — a request that differs from the recorded one fails the run with `cassette_mismatch`
 * and a line diff (recorded `-`, now `+`) naming the changed line. Nothing goes to the network.
 */
export class CassetteReplay {
  readonly models: Models;
  #cassette: Cassette;
  #where: string;
  #match: MatchMode;
  #playing = new Map<string, Playing>();
  #taken = new Set<CassetteRun>();

  /**
   * `where` names the cassette in errors (its file); `ai` resolves model ids as the station would;
   * `secrets` (recordingSecrets) are masked in a request before it is compared, as they were when recorded.
   */
  constructor(
    cassette: Cassette,
    options: {
      where: string;
      match?: MatchMode;
      ai: Pick<AiConfig, "model" | "provider">;
      secrets?: Iterable<string>;
    },
  ) {
    const mask = masker(options.secrets ?? []);
    this.#cassette = cassette;
    this.#where = options.where;
    this.#match = options.match ?? "strict";
    this.models = {
      resolve: (ref, run) => {
        const { id } = modelIdOf(options.ai, ref);
        return doubledModel(id, async (o) => {
          if (!run) throw new Error("a replayed model answers only a started run");
          const p = this.#play(run);
          const events = p.run.events.flatMap((e) => "model" in e ? [e.model] : []);
          const recorded = events[p.model];
          const call = p.model + 1;
          if (!recorded) {
            throw this.#mismatch(run, `made model call ${call}, and the recording has ${events.length}`);
          }
          if (this.#match === "strict") {
            const now = maskStrings(modelRequest(run.model, o), mask) as typeof recorded.request;
            const diff = lineDiff(requestLines(recorded.request), requestLines(now));
            if (diff.length) {
              throw this.#mismatch(
                run,
                `model call ${call} differs from the recording (- recorded, + now):`,
                diff,
              );
            }
          }
          p.model++;
          return await Promise.resolve(generateResult(recorded.response));
        });
      },
    };
  }

  /** The recorded result of the run's next call to `name`, or undefined when the recording has no more. */
  toolAnswer(run: RunIdentity, name: string): ToolEvent | undefined {
    const p = this.#play(run);
    const n = p.tools.get(name) ?? 0;
    const recorded = p.run.events.flatMap((e) => "tool" in e && e.tool.name === name ? [e.tool] : [])[n];
    if (recorded) p.tools.set(name, n + 1);
    return recorded;
  }

  /** The recordings no run replayed (a run that no longer happens). */
  unplayed(): CassetteRun[] {
    return this.#cassette.runs.filter((r) => !this.#taken.has(r));
  }

  #play(run: RunIdentity): Playing {
    const found = this.#playing.get(run.id);
    if (found) return found;
    const free = this.#cassette.runs.filter((r) => !this.#taken.has(r) && r.agent === run.agent);
    // The key finds a run's own recording whatever order runs start in; a run whose place changed (an agent
    // now run as a workflow step) takes the next free one of its agent, and its requests are still compared.
    const recording = free.find((r) => r.key === run.key) ?? free[0];
    if (!recording) {
      const keys = this.#cassette.runs.map((r) => r.key).join(", ") || "none";
      throw this.#mismatch(run, `has no recording (recorded runs: ${keys})`);
    }
    this.#taken.add(recording);
    const p = { run: recording, model: 0, tools: new Map<string, number>() };
    this.#playing.set(run.id, p);
    return p;
  }

  #mismatch(run: RunIdentity, what: string, diff: string[] = []): RunFailure {
    return new RunFailure(
      "cassette_mismatch",
      [`cassette ${this.#where}: agent ${run.agent} (${run.key}) ${what}`, ...diff].join("\n"),
      {
        hint:
          "if the change is intended, re-record: `stn test --update` (or `match: loose` to answer by order)",
        details: { cassette: this.#where, run: run.key, diff },
      },
    );
  }
}
