import { join } from "node:path";
import { StationError } from "../errors.ts";

/** An environment name is a folder name under `$STATION_HOME/environments`. */
export const ENVIRONMENT_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

/** Throws 400 `invalid_environment` unless `name` can be an environment folder. */
export function requireEnvironmentName(name: string): string {
  if (ENVIRONMENT_NAME.test(name) && name.length <= 64) return name;
  throw new StationError("invalid_environment", `invalid environment name ${JSON.stringify(name)}`, {
    status: 400,
    hint: "environment names are folder names under $STATION_HOME/environments: letters, digits, " +
      "`_`, `.`, `-`, starting with a letter or digit (e.g. `default`, `staging`)",
  });
}

/** The folder of an environment (the name is checked first, so it never leaves `environmentsDir`). */
export function environmentDir(environmentsDir: string, name: string): string {
  return join(environmentsDir, requireEnvironmentName(name));
}

/** 404 `environment_not_found` for a missing environment folder. */
export function environmentNotFound(name: string, dir: string): StationError {
  return new StationError("environment_not_found", `no environment \`${name}\` (${dir} does not exist)`, {
    hint: `\`stn env list\` shows the environments; \`stn env create ${name}\` makes it`,
  });
}

/** Throws 404 unless the environment folder exists; returns its path. */
export async function requireEnvironment(environmentsDir: string, name: string): Promise<string> {
  const dir = environmentDir(environmentsDir, name);
  try {
    if ((await Deno.stat(dir)).isDirectory) return dir;
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  throw environmentNotFound(name, dir);
}
