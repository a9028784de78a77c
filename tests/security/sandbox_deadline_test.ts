import { assertStrictEquals } from "../helpers/assert.ts";
import type { StationError } from "../../src/errors.ts";
import { readAll, testBackend, testInBothModes, testLabels } from "../sandbox/backend.ts";
import { BUSYBOX } from "../sandbox/images.ts";

// Every process of the sandbox user is stopped as soon as it starts — including the helper commands
// stn runs in the container to read a file. Without a deadline the read would wait forever.
const FREEZER = "while :; do kill -STOP -1; done";

testInBothModes(
  "security: a sandbox that freezes stn's helper commands gets 504 sandbox_timeout, not a hung read",
  async (mode) => {
    const backend = testBackend(mode);
    // The same engine with a short call deadline, as sandbox.docker_timeout: 2s would give.
    const impatient = testBackend(mode, { memoryMb: 256, cpus: 1, callTimeoutMs: 2_000 });
    const id = await backend.create({ image: BUSYBOX, network: false, labels: testLabels("deadline") });
    try {
      await backend.writeFile(id, "data.txt", { data: new TextEncoder().encode("data"), size: 4 });
      assertStrictEquals(
        (await readAll((await backend.readFile(id, "data.txt", 1024)).stream)).toString(),
        "data",
      );
      const freezing = backend.exec(id, { cmd: FREEZER, timeoutMs: 60_000, maxOutputBytes: 1024 });
      freezing.catch(() => {});

      // Reads that start before the freezer runs are answered; once it runs, the next one must time out.
      const bound = AbortSignal.timeout(45_000);
      const hung = new Promise<string>((resolve) => bound.addEventListener("abort", () => resolve("hung")));
      let outcome = "answered";
      while (outcome === "answered") {
        outcome = await Promise.race([
          impatient.readFile(id, "data.txt", 1024).then(
            (file) => (file.stream.destroy(), "answered"),
            (e: StationError) => `${e.status} ${e.code}`,
          ),
          hung,
        ]);
      }
      assertStrictEquals(outcome, "504 sandbox_timeout");
    } finally {
      await backend.destroy(id);
    }
  },
);
