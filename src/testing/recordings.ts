/** The recordings a station keeps for runs started with `record: true`, until the caller fetches the cassette. */

import { join } from "node:path";
import type { LoadedConfig } from "../config/resolve.ts";
import type { Cassette } from "../contract/cassette.ts";
import { StationError } from "../errors.ts";
import { writeCassette } from "./cassette.ts";
import type { DoublesRegistry, RunDoubles } from "../agents/doubles.ts";
import { CaseTools, type ToolMocks } from "./mocks.ts";
import { CassetteRecorder, recordingSecrets } from "./record.ts";

/** How many recordings a station keeps; a newer one drops the oldest (its run stops recording). */
export const KEPT_RECORDINGS = 64;

/** A test case being re-recorded (`stn test --update`): its doubles, and writing its cassette after the run. */
export interface Rerecording {
  doubles: RunDoubles;
  recorder: CassetteRecorder;
  /** Writes the cassette whole (temp file + rename). */
  save(path: string): Promise<void>;
}

/**
 * Doubles that re-record a test case: the configured (real) model, the case's mocks still answering their
 * tools and every other tool live, and everything the runs do recorded. Register them for the case's run
 * (AgentRunRequest.doubles, or DoublesRegistry.claimFor for a workflow run), then `save` when it has ended.
 */
export async function rerecording(
  recorded: Cassette["recorded"],
  settings: RecordingSettings,
  mocks?: ToolMocks,
): Promise<Rerecording> {
  const dir = recorded.environment ? join(settings.environmentsDir, recorded.environment) : undefined;
  const recorder = new CassetteRecorder(recorded, await recordingSecrets(settings.apiKey, settings.env, dir));
  return {
    doubles: { tools: new CaseTools({ mocks, live: true }), record: recorder },
    recorder,
    save: (path) => writeCassette(path, recorder.cassette()),
  };
}

/** What a recording needs from the station: its API key, process environment and environments folder. */
export interface RecordingSettings {
  apiKey?: string;
  env: Record<string, string | undefined>;
  environmentsDir: string;
}

/** A station's recording settings: its model key, its process environment, its environments folder. */
export function recordingSettings(config: LoadedConfig): RecordingSettings {
  return {
    apiKey: config.values.ai.api_key,
    env: Deno.env.toObject(),
    environmentsDir: config.paths.environments,
  };
}

/**
 * Recordings of API-started runs (`record: true` on a start): a CassetteRecorder per run, registered in
 * the doubles registry for the run (and so for its agent steps and child agents), kept in memory — at most
 * KEPT_RECORDINGS, oldest dropped — for `GET …/{runId}/cassette`.
 */
export class Recordings {
  #kept = new Map<string, CassetteRecorder>();
  #registry: DoublesRegistry;
  #settings: RecordingSettings;

  constructor(registry: DoublesRegistry, settings: RecordingSettings) {
    this.#registry = registry;
    this.#settings = settings;
  }

  /** A recorder for a run about to start (`recorded` says what it runs), secrets of its environment masked. */
  async recorder(recorded: Cassette["recorded"]): Promise<CassetteRecorder> {
    return (await rerecording(recorded, this.#settings)).recorder;
  }

  /** Keeps the recording of a started run (already registered for it), dropping the oldest past the limit. */
  keep(runId: string, recorder: CassetteRecorder): void {
    this.#kept.set(runId, recorder);
    for (const old of this.#kept.keys()) {
      if (this.#kept.size <= KEPT_RECORDINGS) break;
      this.#kept.delete(old);
      this.#registry.release(old);
    }
  }

  /** Whether a run has a recording kept. */
  has(runId: string): boolean {
    return this.#kept.has(runId);
  }

  /** The run's cassette so far; `cassette_not_found` when it was not recorded (or was dropped). */
  cassette(runId: string): Cassette {
    const recorder = this.#kept.get(runId);
    if (!recorder) {
      throw new StationError("cassette_not_found", `run ${runId} has no recording`, {
        hint:
          "start the run with `record: true` (`--record FILE` on the CLI) and fetch the cassette when it ends",
      });
    }
    return recorder.cassette();
  }
}
