/** Picking a sandbox image: a runtime's image or an explicit one, checked against the allowed list. */

import type { Config } from "../config/schema.ts";
import { StationError } from "../errors.ts";

/** The image a sandbox will use, and the runtime it was chosen for (if any). */
export interface ImageChoice {
  image: string;
  runtime: string | null;
}

/** Runtime names of Station kept as aliases: `linux` is the plain shell image (`bash`) unless images maps it. */
export const RUNTIME_ALIASES: Record<string, string> = { linux: "bash" };

/**
 * Picks the image for a runtime or an explicit image. An explicit image must be one the config
 * maps a runtime to or lists in sandbox.allowed_images; nothing else is run.
 */
export function chooseImage(
  config: Config["sandbox"],
  request: { runtime?: string; image?: string },
): ImageChoice {
  if (request.image) {
    const allowed = new Set([...Object.values(config.images), ...config.allowed_images]);
    if (!allowed.has(request.image)) {
      throw new StationError("image_not_allowed", `image ${JSON.stringify(request.image)} is not allowed`, {
        status: 400,
        hint: `add it to sandbox.allowed_images in config.yaml; allowed now: ${[...allowed].join(", ")}`,
        exitCode: 2,
      });
    }
    return { image: request.image, runtime: request.runtime ?? null };
  }
  const runtime = request.runtime ?? config.default_runtime;
  const image = config.images[runtime] ?? config.images[RUNTIME_ALIASES[runtime] ?? ""];
  if (!image) {
    throw new StationError("unknown_runtime", `unknown sandbox runtime ${JSON.stringify(runtime)}`, {
      status: 400,
      hint: `known runtimes: ${
        [...Object.keys(config.images), ...Object.keys(RUNTIME_ALIASES).filter((a) => !(a in config.images))]
          .join(", ")
      } (sandbox.images in config.yaml)`,
      exitCode: 2,
    });
  }
  return { image, runtime };
}

/** How compute mode runs code for each runtime: the file the code goes into and the command. */
export const INTERPRETERS: Record<string, { file: string; cmd: string[] }> = {
  python: { file: "main.py", cmd: ["python3", "main.py"] },
  node: { file: "main.js", cmd: ["node", "main.js"] },
  bash: { file: "main.sh", cmd: ["bash", "main.sh"] },
  linux: { file: "main.sh", cmd: ["bash", "main.sh"] },
  sh: { file: "main.sh", cmd: ["sh", "main.sh"] },
};

/** The warm pool's sizes by image (`sandbox.pool` keys are runtime names or images); empty pools left out. */
export function poolSizes(config: Config["sandbox"]): Map<string, { size: number; maxIdleMs: number }> {
  const sizes = new Map<string, { size: number; maxIdleMs: number }>();
  for (const [key, p] of Object.entries(config.pool)) {
    if (p.size > 0) sizes.set(config.images[key] ?? key, { size: p.size, maxIdleMs: p.max_idle });
  }
  return sizes;
}
