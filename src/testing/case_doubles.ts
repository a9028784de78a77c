/**
 * A test case's doubles: its model (a cassette replayed, a script) and its tools (mocks, recorded results,
 * live calls with `tools: live`); re-recording with `stn test --update` takes recordings.ts's `rerecording`.
 */

import { join } from "node:path";
import { errorMessage } from "../errors.ts";
import type { AiConfig } from "../agents/providers.ts";
import type { TestCase } from "../contract/tests.ts";
import { parseCassette } from "./cassette.ts";
import { recordingSecrets } from "./record.ts";
import type { RunDoubles } from "../agents/doubles.ts";
import type { ReadText } from "./load.ts";
import { CaseTools } from "./mocks.ts";
import { CassetteReplay } from "./replay.ts";
import { ScriptModels } from "./script.ts";

/** The cassette file a case names (relative to its test file), or none. */
export function cassettePath(c: TestCase, dir: string): string | undefined {
  return c.model && "cassette" in c.model ? join(dir, c.model.cassette) : undefined;
}

/** Where a case's files are and how to read them: its test file's folder, the model settings, the environment. */
export interface CaseFiles {
  dir: string;
  ai: AiConfig;
  read: ReadText;
  environmentDir: string;
}

/** The doubles a case runs under: a replayed cassette or a script as its model, its mocks as its tools. */
export async function caseDoubles(c: TestCase, from: CaseFiles): Promise<RunDoubles> {
  const { dir, ai, read, environmentDir } = from;
  const path = cassettePath(c, dir);
  let replay: CassetteReplay | undefined;
  if (path) {
    const text = await read(path).catch((err) => {
      throw Object.assign(new Error(`cannot read cassette ${path}: ${errorMessage(err)}`), {
        hint: "record it with `stn test --update` (or `stn agent run … --record FILE`)",
      });
    });
    // The secrets masked when it was recorded are masked in today's requests too before they are compared.
    const secrets = await recordingSecrets(ai.api_key, Deno.env.toObject(), environmentDir);
    replay = new CassetteReplay(parseCassette(text, path), {
      where: path,
      match: c.match ?? "strict",
      ai,
      secrets,
    });
  }
  const script = c.model && "script" in c.model ? new ScriptModels(c.model.script, ai) : undefined;
  return {
    models: replay?.models ?? script?.models,
    tools: new CaseTools({ mocks: c.mocks, replay, live: c.tools === "live" }),
  };
}

/** The cassettes a suite's cases name that can be read, each once, with their text. */
export async function suiteCassettes(
  cases: Array<{ case: TestCase; dir: string }>,
  read: ReadText,
): Promise<Array<{ path: string; text: string }>> {
  const paths = new Set(cases.flatMap((c) => cassettePath(c.case, c.dir) ?? []));
  const out: Array<{ path: string; text: string }> = [];
  for (const path of paths) {
    const text = await read(path).catch(() => undefined);
    if (text !== undefined) out.push({ path, text });
  }
  return out;
}
