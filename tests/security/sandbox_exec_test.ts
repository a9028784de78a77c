import { assert, assertEquals, assertStrictEquals } from "../helpers/assert.ts";
import { Buffer } from "node:buffer";
import { STN_RUN_ARGS } from "../../src/build/stn_flags.ts";
import { tempHome } from "../helpers/home.ts";
import { MAIN, startServe } from "../helpers/stn.ts";
import { removeStationContainers, sandboxConfig, testInBothModes } from "../sandbox/backend.ts";
import { request } from "./sandbox_helpers.ts";

interface Result {
  exit_code: number;
  stdout: string;
  stdout_b64?: string;
  timed_out: boolean;
}

testInBothModes(
  "security: exec timeouts kill everything the command started, whatever it sheds; output comes back byte-exact",
  async (mode) => {
    const home = await tempHome();
    home.writeConfig(sandboxConfig(mode));
    const serve = await startServe({ home: home.home, env: home.env });
    const api = `${serve.url}/api/v1`;
    const post = async (path: string, body: unknown) => {
      const out = await request(`${api}${path}`, undefined, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      assert(out.status < 300, `${path}: ${out.status} ${out.code}`);
      return JSON.parse(new TextDecoder().decode(out.body));
    };
    try {
      const { sandbox_id: id } = await post("/sandboxes", {});
      const exec = (cmd: string, timeout_seconds?: number): Promise<Result> =>
        post(`/sandboxes/${id}/exec`, { cmd, timeout_seconds });
      const survivors = async (marker: string) =>
        (await exec("ps -o args")).stdout.split("\n").filter((l) =>
          l.includes(marker) && !l.includes("ps -o")
        );

      // Each command leaves a process behind that drops what a kill could find it by: its environment
      // (env -i), its session and process group (setsid), its parent (a double fork reparents it to PID 1).
      const escapes = [
        'env -i sh -c "sleep 300" & sleep 100',
        "setsid sleep 301 & sleep 100",
        "(env -i setsid sh -c 'sleep 302' &); sleep 100",
        "sh -c 'while :; do sleep 303 & wait; done' & sleep 100",
      ];
      for (const cmd of escapes) {
        const res = await exec(cmd, 3);
        assertStrictEquals(res.exit_code, 124, cmd);
        assertStrictEquals(res.timed_out, true, cmd);
        assertEquals(await survivors("sleep 30"), [], `still running after ${JSON.stringify(cmd)}`);
      }

      // 1,000 random bytes: exact through the JSON result (base64), the SSE stream, the file API and the CLI.
      const written = await exec("head -c 1000 /dev/urandom > random.bin; cat random.bin");
      assertStrictEquals(written.exit_code, 0);
      const file = await request(`${api}/sandboxes/${id}/files/random.bin`, undefined);
      const bytes = Buffer.from(file.body!);
      assertStrictEquals(bytes.length, 1000);
      assert(written.stdout_b64 !== undefined, "binary stdout came back without its bytes");
      assert(Buffer.from(written.stdout_b64, "base64").equals(bytes), "stdout_b64 differs from the file");

      const sse = await request(`${api}/sandboxes/${id}/exec?stream=1`, undefined, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ cmd: ["cat", "random.bin"] }),
      });
      const chunks = new TextDecoder().decode(sse.body).split("\n\n")
        .filter((block) => block.startsWith("event: stdout"))
        .map((block) => JSON.parse(block.slice(block.indexOf("data: ") + 6)).data_b64 as string);
      assert(Buffer.concat(chunks.map((c) => Buffer.from(c, "base64"))).equals(bytes), "SSE bytes differ");

      const cli = await new Deno.Command(Deno.execPath(), {
        args: [...STN_RUN_ARGS, MAIN, "sandbox", "exec", id, "--", "cat", "random.bin"],
        env: { ...home.env, STATION_URL: serve.url },
        stdout: "piped",
        stderr: "piped",
      }).output();
      assertStrictEquals(cli.code, 0, new TextDecoder().decode(cli.stderr));
      assert(Buffer.from(cli.stdout).equals(bytes), "the CLI did not write the raw bytes");
      // Text output is unchanged: no base64 alongside it.
      const text = await exec("echo héllo");
      assertStrictEquals(text.stdout, "héllo\n");
      assertStrictEquals(text.stdout_b64, undefined);

      await request(`${api}/sandboxes/${id}`, undefined, { method: "DELETE" });
    } finally {
      await serve.stop();
      await removeStationContainers(home.path("stn.db"));
      await home.cleanup();
    }
  },
);
