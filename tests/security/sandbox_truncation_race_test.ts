import { assert, assertEquals, assertNotMatch, assertStrictEquals } from "../helpers/assert.ts";
import { tempHome } from "../helpers/home.ts";
import { processAlive, startServe } from "../helpers/stn.ts";
import { removeStationContainers, sandboxConfig, testInBothModes } from "../sandbox/backend.ts";
import { type ReadOutcome, repeatFor, request } from "./sandbox_helpers.ts";

// The loop: a command in the sandbox keeps growing a file to 3 MB and truncating it while
// the API reads it again and again.
const GROWER = "while :; do head -c 3000000 /dev/urandom > grow.bin; : > grow.bin; done";
const RACE_MS = 10_000;

testInBothModes(
  "security: reading a file the sandbox keeps truncating never gives a short 200 and never kills stn serve",
  async (mode) => {
    const home = await tempHome();
    home.writeConfig(sandboxConfig(mode));
    const serve = await startServe({ home: home.home, env: home.env });
    try {
      const api = `${serve.url}/api/v1`;
      const opened = await request(`${api}/sandboxes`, undefined, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
      });
      assertStrictEquals(opened.status, 201);
      const id = (JSON.parse(new TextDecoder().decode(opened.body)) as { sandbox_id: string }).sandbox_id;
      const growing = request(`${api}/sandboxes/${id}/exec`, undefined, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ cmd: GROWER, timeout_seconds: 60 }),
      }, 90_000);

      const outcomes: ReadOutcome[] = [];
      await repeatFor(RACE_MS, async () => {
        outcomes.push(
          ...await Promise.all(
            [1, 2, 3].map(() => request(`${api}/sandboxes/${id}/files/grow.bin`, undefined)),
          ),
        );
      }, () => outcomes.some((o) => o.status === 200 && !o.aborted));

      const complete = outcomes.filter((o) => o.status === 200 && !o.aborted);
      const short = complete.filter((o) => o.body!.length !== o.announced);
      assertStrictEquals(short.length, 0, `${short.length} 200s were shorter than their Content-Length`);
      assertStrictEquals(outcomes.filter((o) => o.hung).length, 0, "a read hung");
      assertEquals(outcomes.filter((o) => o.unreachable), [], "the server stopped answering");
      const serverErrors = outcomes.filter((o) => o.status >= 500);
      assertEquals(serverErrors, [], "a read failed with a 5xx");
      // The loop really raced the reads: some came back whole, and stn serve is still up and answering.
      assert(complete.length > 0, "no read completed");
      assert(processAlive(serve.child.pid), `stn serve died:\n${serve.stderr()}`);
      assertStrictEquals((await request(`${serve.url}/health`, undefined)).status, 200);
      assertNotMatch(serve.stderr(), /Uncaught|Unexpected end of data/);

      await request(`${api}/sandboxes/${id}`, undefined, { method: "DELETE" });
      await growing;
    } finally {
      await serve.stop();
      await removeStationContainers(home.path("stn.db"));
      await home.cleanup();
    }
  },
);
