/** The cassette file: reading, writing and the request lines a drift diff compares (schema: src/contract/cassette.ts). */

import { stringify } from "yaml";
import { type Cassette, CassetteSchema, type ModelRequest } from "../contract/cassette.ts";
import { StationError } from "../errors.ts";
import { writeFileAtomic } from "../lib/write_atomic.ts";
import { parseYaml, yamlData } from "../lib/yaml.ts";

export * from "../contract/cassette.ts";

/** Reads and checks a cassette file; a missing, unparsable or malformed file is `cassette_invalid`. */
export async function readCassette(path: string): Promise<Cassette> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (err) {
    throw new StationError("cassette_invalid", `cannot read cassette ${path}: ${(err as Error).message}`, {
      hint: "record it: `stn agent run NAME TASK --record FILE` (or `stn test --update`)",
    });
  }
  return parseCassette(text, path);
}

/** Parses a cassette's YAML text (`where` names it in errors). */
export function parseCassette(text: string, where: string): Cassette {
  const invalid = (why: string) =>
    new StationError("cassette_invalid", `cassette ${where}: ${why}`, {
      hint: "re-record it (`stn test --update`) rather than editing it by hand",
    });
  const doc = parseYaml(text, { uniqueKeys: true });
  if (doc.errors.length) throw invalid(doc.errors[0].message.split("\n")[0]);
  let data: unknown;
  try {
    data = yamlData(doc);
  } catch (err) {
    throw invalid((err as Error).message);
  }
  const parsed = CassetteSchema.safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw invalid(`${issue.path.join(".") || "(top)"}: ${issue.message}`);
  }
  return parsed.data;
}

/** A cassette as its file's text: YAML, keys in a fixed order, long strings as block text (one line a line). */
export function cassetteText(cassette: Cassette): string {
  return stringify(CassetteSchema.parse(cassette), { lineWidth: 0, aliasDuplicateObjects: false });
}

/** Writes a cassette whole or not at all (temp file + rename). */
export async function writeCassette(path: string, cassette: Cassette): Promise<void> {
  try {
    await writeFileAtomic(path, cassetteText(cassette));
  } catch (err) {
    throw new StationError("write_failed", `cannot write cassette ${path}: ${(err as Error).message}`, {
      hint: "check that the folder exists and is writable",
    });
  }
}

/** A request as the lines a drift diff compares: the YAML it has in the cassette file. */
export function requestLines(request: ModelRequest): string[] {
  return stringify(request, { lineWidth: 0, aliasDuplicateObjects: false }).replace(/\n$/, "").split("\n");
}
