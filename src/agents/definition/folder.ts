import { basename, dirname, join, resolve } from "node:path";
import { agentNameFromFile, parseAgent, type ParsedAgent, PROMPT_FILE } from "./load.ts";
import { checkReferences, type ReferenceOptions } from "./references.ts";
import { errorMessage } from "../../errors.ts";

/**
 * Loading agents the way an environment holds them: every `agents/*.prompt` of a folder, checked
 * together (child agents name each other). `stn sync` loads the folder; `stn agent validate FILE…`
 * checks each file with its folder's other agents as the known children.
 */

export interface FolderOptions extends ReferenceOptions {
  environment: string;
  defaultMaxSteps?: number;
}

/** The `.prompt` files of a folder, sorted; none when the folder does not exist. */
export async function promptFiles(directory: string): Promise<string[]> {
  const files: string[] = [];
  try {
    for await (const e of Deno.readDir(directory)) {
      if ((e.isFile || e.isSymlink) && PROMPT_FILE.test(e.name)) files.push(join(directory, e.name));
    }
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  return files.sort();
}

/** Reads and parses one file; an unreadable file is an agent with one error. */
async function readAgent(path: string, options: FolderOptions): Promise<ParsedAgent> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (err) {
    return {
      name: agentNameFromFile(path),
      path,
      errors: [{
        code: "file_unreadable",
        path: "/",
        message: `cannot read the file: ${errorMessage(err)}`,
        hint: "check its permissions (and, for a symlink, its target)",
      }],
      warnings: [],
      lists: { tools: [], agents: [] },
      place: () => ({}),
    };
  }
  return parseAgent(text, {
    environment: options.environment,
    path,
    defaultMaxSteps: options.defaultMaxSteps,
  });
}

/** Every agent of a folder, each with its issues and (when valid) its definition. */
export async function loadAgentsFolder(directory: string, options: FolderOptions): Promise<ParsedAgent[]> {
  const agents: ParsedAgent[] = [];
  for (const file of await promptFiles(directory)) agents.push(await readAgent(file, options));
  checkReferences(agents, options);
  return agents;
}

/**
 * Checks the given files, each together with the other agents of its folder (which are loaded to
 * check children and cycles but not reported).
 */
export async function loadAgentFiles(files: string[], options: FolderOptions): Promise<ParsedAgent[]> {
  const folders = new Map<string, ParsedAgent[]>();
  const out: ParsedAgent[] = [];
  for (const given of files) {
    const path = resolve(given);
    const dir = dirname(path);
    let group = folders.get(dir);
    if (!group) {
      group = [];
      for (const f of await promptFiles(dir)) group.push(await readAgent(f, options));
      folders.set(dir, group);
    }
    if (!group.some((a) => a.path === path)) group.push(await readAgent(path, options));
  }
  for (const group of folders.values()) checkReferences(group, options);
  for (const given of files) {
    const path = resolve(given);
    const found = folders.get(dirname(path))!.find((a) => a.path === path)!;
    out.push({ ...found, path: given });
  }
  return out;
}

/** An agent whose file does not load: its file and its first problem (`X.prompt:3:5: code: message`). */
export interface InvalidAgentFile {
  file: string;
  problem: string;
}

/** The first error of an agent that does not load, for one-line messages. */
export function firstProblem(a: Pick<ParsedAgent, "path" | "errors">): string {
  const e = a.errors[0];
  const at = e?.line ? `:${e.line}:${e.column ?? 1}` : "";
  return e ? `${basename(a.path)}${at}: ${e.code}: ${e.message}` : `${basename(a.path)}: does not load`;
}

/** The agents of a folder that do not load as sync would load them, by name, each with its first problem. */
export async function invalidAgentFiles(
  directory: string,
  options: FolderOptions,
): Promise<Map<string, InvalidAgentFile>> {
  const loaded = await loadAgentsFolder(directory, options);
  return new Map(
    loaded.filter((a) => a.errors.length).map((a) => [a.name, { file: a.path, problem: firstProblem(a) }]),
  );
}
