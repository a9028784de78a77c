/**
 * `pip_packages` of an agent's sandbox: stn does not install packages when a sandbox opens (sandboxes
 * have no network by default, and an image that carries them starts the same every time); it checks, once
 * per image, that the image carries them, and otherwise fails with an error saying how to build one.
 */

import { StationError } from "../errors.ts";
import type { SandboxBackend } from "./backend.ts";
import { inThrowaway } from "./compute.ts";

/** The distribution name of a requirement: `pandas==2.2`, `requests[socks]>=2` → pandas, requests. */
export function packageName(requirement: string): string {
  return requirement.trim().split(/[\s<>=!~;[@]/)[0];
}

// Prints the names of the distributions that are not installed, one a line. It reads the *.dist-info and
// *.egg-info folders on sys.path with os and re only: a minimal Python may lack importlib.metadata's imports.
const CHECK = `import os, re, sys
norm = lambda n: re.sub(r"[-_.]+", "_", n).lower()
have = set()
for d in sys.path:
    try:
        entries = os.listdir(d or ".")
    except OSError:
        continue
    for e in entries:
        if e.endswith((".dist-info", ".egg-info")):
            have.add(norm(e.rsplit(".", 1)[0].split("-")[0]))
for p in sys.argv[1:]:
    if norm(p) not in have:
        print(p)
`;

/** The packages (by name) the image does not carry; runs python3 in a throwaway container without a network. */
export async function missingPackages(
  backend: SandboxBackend,
  stationId: string,
  image: string,
  packages: string[],
): Promise<string[]> {
  return await inThrowaway(backend, { stationId, image, kind: "pkgcheck" }, async (containerId) => {
    const names = packages.map(packageName);
    const result = await backend.exec(containerId, {
      cmd: ["python3", "-c", CHECK, ...names],
      timeoutMs: 60_000,
      maxOutputBytes: 64 * 1024,
    });
    if (result.exit_code !== 0) {
      throw packagesMissing(
        image,
        names,
        `python3 could not check them (${result.stderr.trim() || "exit " + result.exit_code})`,
      );
    }
    return result.stdout.split("\n").filter((l) => l !== "");
  });
}

/** 400 pip_packages_missing: the image lacks packages the agent's sandbox names, and how to provide them. */
export function packagesMissing(image: string, missing: string[], why?: string): StationError {
  return new StationError(
    "pip_packages_missing",
    `the sandbox image ${image} does not carry the pip_packages ${missing.join(", ")}` +
      (why ? `: ${why}` : ""),
    {
      status: 400,
      hint:
        `build an image that carries them (FROM ${image} + RUN pip install ${missing.join(" ")}) and map ` +
        "the runtime to it in sandbox.images (or list it in sandbox.allowed_images and set the agent's " +
        "sandbox.image); stn does not install packages when a sandbox opens (docs/sandboxes.md#packages)",
      details: { image, missing },
    },
  );
}

/** Checks an image's packages once per image and list (a failed check is tried again next time). */
export class PackageChecks {
  readonly #backend: SandboxBackend;
  readonly #stationId: string;
  readonly #checked = new Map<string, Promise<void>>();

  constructor(backend: SandboxBackend, stationId: string) {
    this.#backend = backend;
    this.#stationId = stationId;
  }

  /** Resolves when `image` carries every package; throws pip_packages_missing naming those it lacks. */
  require(image: string, packages: string[]): Promise<void> {
    if (packages.length === 0) return Promise.resolve();
    const key = `${image}\0${[...packages].sort().join("\0")}`;
    let check = this.#checked.get(key);
    if (!check) {
      check = missingPackages(this.#backend, this.#stationId, image, packages).then((missing) => {
        if (missing.length > 0) throw packagesMissing(image, missing);
      });
      check.catch(() => this.#checked.delete(key));
      this.#checked.set(key, check);
    }
    return check;
  }
}
