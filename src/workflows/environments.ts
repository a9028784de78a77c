import { readdirSync } from "node:fs";
import { join } from "node:path";
import { WORKFLOW_FILE } from "./definition/load.ts";
import { environmentWorkflowsDir } from "./sync.ts";

/** An environment folder and what it holds. */
export interface EnvironmentInfo {
  name: string;
  directory: string;
  default: boolean;
  workflow_files: number;
}

/** The folders under $STATION_HOME/environments, by name; none when the folder does not exist yet. */
export function listEnvironments(environmentsDir: string, defaultName: string): EnvironmentInfo[] {
  let entries: { name: string; isDirectory(): boolean }[];
  try {
    entries = readdirSync(environmentsDir, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries.filter((e) => e.isDirectory()).map((e) => e.name).sort().map((name) => ({
    name,
    directory: join(environmentsDir, name),
    default: name === defaultName,
    workflow_files: countWorkflowFiles(environmentWorkflowsDir(environmentsDir, name)),
  }));
}

function countWorkflowFiles(dir: string): number {
  try {
    return readdirSync(dir).filter((f) => WORKFLOW_FILE.test(f)).length;
  } catch {
    return 0;
  }
}
