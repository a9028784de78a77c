import { fileURLToPath } from "node:url";
import { VERSION } from "../version.ts";
import { type EmbeddedAssets, embeddedAssets } from "./embedded.ts";

/** What stn reports about itself (`stn version`): the nats-server it would run is looked up apart. */
export interface BuildInfo {
  version: string;
  /** git commit built (compiled) or checked out (checkout); null without git. */
  commit: string | null;
  /** When the binary was built; from a checkout, the date of its commit. */
  build_date: string | null;
  deno: string;
  /** A `deno compile` binary, or `deno run` of a checkout. */
  build: "compiled" | "checkout";
}

const CHECKOUT = fileURLToPath(new URL("../../", import.meta.url));

/** HEAD's commit and commit date in a checkout; nulls when git is missing or it is not a git tree. */
export async function gitHead(root: string): Promise<{ commit: string | null; date: string | null }> {
  try {
    const out = await new Deno.Command("git", {
      args: ["-C", root, "log", "-1", "--format=%H %cI"],
      stdout: "piped",
      stderr: "null",
    }).output();
    const [commit, date] = new TextDecoder().decode(out.stdout).trim().split(" ");
    return out.success && commit ? { commit, date: date ?? null } : { commit: null, date: null };
  } catch {
    return { commit: null, date: null }; // no git on this machine
  }
}

/** This stn's build: from the embedded manifest when compiled, from git when run from a checkout. */
export async function buildInfo(assets: EmbeddedAssets | undefined = embeddedAssets()): Promise<BuildInfo> {
  if (assets) {
    const m = assets.manifest;
    return {
      version: m.stn_version,
      commit: m.commit,
      build_date: m.built_at,
      deno: Deno.version.deno,
      build: "compiled",
    };
  }
  const head = await gitHead(CHECKOUT);
  return {
    version: VERSION,
    commit: head.commit,
    build_date: head.date,
    deno: Deno.version.deno,
    build: "checkout",
  };
}
