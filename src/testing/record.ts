/** Recording a cassette: every model call and tool call of the runs a CassetteRecorder is registered for. */

import type { LoopTool } from "../agents/loop_io.ts";
import { errorMessage } from "../errors.ts";
import { RunFailure } from "../agents/loop.ts";
import type { ResolvedModel } from "../agents/providers.ts";
import { masker } from "../environment_files/placeholders.ts";
import { isSecretName } from "../environment_files/secrets.ts";
import { readVariables } from "../environment_files/variables.ts";
import { type Cassette, CASSETTE_VERSION, type CassetteRun } from "./cassette.ts";
import type { Recorder, RunIdentity } from "../agents/doubles.ts";
import { doubledModel, type LanguageModel, modelRequest, modelResponse } from "./model_calls.ts";

/**
 * Records the runs it is registered for (RunDoubles.record) into one cassette: each run's model requests
 * and answers and its tool calls and results, in the order they happened. Runs are keyed by their place
 * in the run tree (RunIdentity.key), so concurrent steps replay whatever order they start in. Every
 * secret value given is masked in the cassette.
 */
export class CassetteRecorder implements Recorder {
  #runs = new Map<string, CassetteRun>();
  #mask: (text: string) => string;
  #recorded: Cassette["recorded"];

  constructor(recorded: Cassette["recorded"], secrets: Iterable<string> = []) {
    this.#recorded = recorded;
    this.#mask = masker(secrets);
  }

  model(run: RunIdentity, inner: ResolvedModel): ResolvedModel {
    return doubledModel(inner.id, async (o) => {
      // The station's providers all speak the AI SDK's v4 model interface.
      const r = await (inner.model as LanguageModel).doGenerate(o);
      this.#run(run).events.push({
        model: { request: modelRequest(run.model, o), response: modelResponse(r) },
      });
      return r;
    });
  }

  tool(run: RunIdentity, tool: LoopTool): LoopTool {
    return {
      ...tool,
      run: async (args, signal, callId) => {
        const events = this.#run(run).events;
        try {
          const output = await tool.run(args, signal, callId);
          events.push({ tool: { name: tool.name, args, output } });
          return output;
        } catch (err) {
          // A canceled call or a double that had no answer is not what the tool does.
          if (!signal.aborted && !(err instanceof RunFailure)) {
            events.push({ tool: { name: tool.name, args, error: errorMessage(err) || String(err) } });
          }
          throw err;
        }
      },
    };
  }

  /** The cassette so far: runs in key order, secrets masked. */
  cassette(): Cassette {
    const runs = [...this.#runs.values()].sort((a, b) => a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
    return maskStrings(
      { stn_cassette: CASSETTE_VERSION, recorded: this.#recorded, runs },
      this.#mask,
    ) as Cassette;
  }

  #run(run: RunIdentity): CassetteRun {
    let r = this.#runs.get(run.id);
    if (!r) this.#runs.set(run.id, r = { key: run.key, agent: run.agent, model: run.model, events: [] });
    return r;
  }
}

/** Every string in a JSON-like value passed through `mask`. */
export function maskStrings(v: unknown, mask: (s: string) => string): unknown {
  if (typeof v === "string") return mask(v);
  if (Array.isArray(v)) return v.map((x) => maskStrings(x, mask));
  if (v && typeof v === "object") {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, maskStrings(x, mask)]));
  }
  return v;
}

/**
 * The values a recording must not hold: the model API key, the process environment's secret-looking
 * variables (API keys among them) and the environment's secret variables (docs/design/agents.md#variables-and-secrets).
 */
export async function recordingSecrets(
  apiKey: string | undefined,
  env: Record<string, string | undefined>,
  environmentDir?: string,
): Promise<string[]> {
  const values = environmentDir ? await readVariables(environmentDir).catch(() => ({})) : {};
  const secret = (entries: [string, string | undefined][]) =>
    entries.filter(([k, v]) => v && isSecretName(k)).map(([, v]) => v!);
  return [...(apiKey ? [apiKey] : []), ...secret(Object.entries(env)), ...secret(Object.entries(values))];
}
