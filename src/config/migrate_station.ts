/**
 * `stn config migrate`: Station's config.yaml as stn's — its keys moved to their stn paths, the ones stn has
 * no use for removed and listed in a closing comment — editing the YAML document so comments stay.
 */

import { isMap, isNode, isScalar, type Pair, type YAMLMap } from "yaml";
import { usageError } from "../errors.ts";
import { parseYaml, yamlData } from "../lib/yaml.ts";
import { OLLAMA_BASE_URL, STATION_KEYS } from "./station_keys.ts";

/** The rewritten text and one line per key changed (`ai_provider → ai.provider`, `ssh_port removed: …`). */
export interface ConfigMigration {
  text: string;
  changes: string[];
}

function keyName(pair: Pair): string {
  return String(isScalar(pair.key) ? pair.key.value : pair.key);
}

function mapAt(root: YAMLMap, section: string | undefined): YAMLMap | undefined {
  if (section === undefined) return root;
  const node = root.get(section, true);
  return isMap(node) ? node : undefined;
}

/** Station's config text as stn's; throws config_invalid when it is not a YAML map. */
export function migrateStationConfig(text: string, source: string): ConfigMigration {
  const doc = parseYaml(text);
  if (doc.errors.length || !isMap(doc.contents)) {
    const why = doc.errors[0]?.message.split("\n")[0] ?? "expected a map of keys";
    throw usageError("config_invalid", `${source}: not a YAML map (${why})`, "fix the file, then migrate it");
  }
  const root = doc.contents;
  const changes: string[] = [];
  const removed: string[] = [];
  for (const [path, rule] of Object.entries(STATION_KEYS)) {
    const [section, key] = path.includes(".") ? path.split(".") : [undefined, path];
    const holder = mapAt(root, section);
    const pair = holder?.items.find((p) => keyName(p) === key);
    if (!holder || !pair) continue;
    // The file's opening comment is the first key's comment (with no blank line between): it stays on top.
    const opening = holder === root && root.items[0] === pair && isNode(pair.key)
      ? pair.key.commentBefore
      : null;
    if (opening && isNode(pair.key)) {
      doc.commentBefore = doc.commentBefore ? `${doc.commentBefore}\n${opening}` : opening;
      pair.key.commentBefore = undefined;
    }
    holder.delete(key);
    if (!("to" in rule)) {
      removed.push(` ${path} (${rule.instead})`);
      changes.push(`${path} removed: ${rule.instead}`);
      continue;
    }
    const value = isNode(pair.value) ? pair.value.toJSON() : pair.value;
    const converted = rule.convert ? rule.convert(value) : value;
    const to = rule.to.split(".");
    if (converted === undefined || doc.hasIn(to)) {
      changes.push(
        `${path} removed: ${converted === undefined ? "stn's default already" : `${rule.to} is set`}`,
      );
      continue;
    }
    doc.setIn(to, converted);
    // The key's own comments go with it: the line above it and the one after its value.
    const moved = doc.getIn(to, true);
    if (isNode(moved) && isNode(pair.value)) moved.comment = pair.value.comment;
    if (isNode(moved) && isNode(pair.key)) moved.commentBefore = pair.key.commentBefore;
    changes.push(`${path} → ${rule.to}`);
  }
  if (doc.getIn(["ai", "provider"]) === "cloudshipai") {
    throw usageError(
      "config_invalid",
      `${source}: ai_provider "cloudshipai" is Station's CloudShip AI, which stn does not speak (nothing written)`,
      "set ai_provider to openai, anthropic, gemini, or openai-compatible with ai_base_url, then migrate again",
    );
  }
  if (doc.getIn(["ai", "provider"]) === "ollama") {
    doc.setIn(["ai", "provider"], "openai-compatible");
    const base = doc.getIn(["ai", "base_url"]);
    const url = typeof base === "string" ? base.replace(/^(https?:\/\/[^/]+)\/?$/, "$1/v1") : OLLAMA_BASE_URL;
    doc.setIn(["ai", "base_url"], url);
    changes.push(`ai.provider ollama → openai-compatible at ${url}`);
  }
  if (removed.length) {
    const note = ` Station keys stn has no use for, removed by stn config migrate:\n${removed.join("\n")}`;
    doc.comment = doc.comment ? `${doc.comment}\n${note}` : note;
  }
  // Anchors and merge keys may have pointed at a removed node: read the result back as data to be sure.
  yamlData(doc);
  return { text: doc.toString(), changes };
}
