/**
 * `stn faker --passthrough` overhead: `read_text_file` of the npm filesystem server called directly and through
 * the real `stn faker` in front of it (one more stdio hop, the session file rewritten after every call), with
 * the official SDK client, interleaved. Prints the medians and the ratio, and the faker's first and last 100
 * calls (a session file that grew with every call would make the last ones slower).
 *
 *   deno run -A scripts/bench/faker.ts [calls=200]
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { fileURLToPath } from "node:url";
import { STN_RUN_ARGS } from "../../src/build/stn_flags.ts";
import { EXAMPLE_MCP_SERVER } from "../../src/environment_files/examples.ts";
import { tableRow } from "./table.ts";

const CALLS = Number(Deno.args[0] ?? 200);
const MAIN = fileURLToPath(new URL("../../main.ts", import.meta.url));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const home = await Deno.makeTempDir({ prefix: "stn-bench-faker-" });
const root = `${home}/files`;
Deno.mkdirSync(root);
Deno.writeTextFileSync(`${root}/a.txt`, "hello\n".repeat(100));
const real = ["run", "--no-config", "--allow-env", `--allow-read=${root}`, EXAMPLE_MCP_SERVER, root];
const env = { ...Deno.env.toObject(), STATION_HOME: home, NO_COLOR: "1" };
const direct = new Client({ name: "bench", version: "1" });
const faked = new Client({ name: "bench", version: "1" });
try {
  await direct.connect(
    new StdioClientTransport({ command: Deno.execPath(), args: real, env, stderr: "pipe" }),
  );
  await faked.connect(
    new StdioClientTransport({
      command: Deno.execPath(),
      args: [
        ...STN_RUN_ARGS,
        MAIN,
        "faker",
        "--command",
        Deno.execPath(),
        "--args",
        real.join(","),
        "--passthrough",
      ],
      env,
      stderr: "pipe",
    }),
  );
  const call = async (client: typeof direct) => {
    const r = await client.callTool({ name: "read_text_file", arguments: { path: `${root}/a.txt` } });
    return JSON.stringify(r);
  };
  if (await call(direct) !== await call(faked)) throw new Error("the two paths answer differently");
  for (let i = 0; i < 20; i++) await call(direct), await call(faked);
  const times = { direct: [] as number[], faked: [] as number[] };
  for (let i = 0; i < CALLS; i++) {
    for (const [name, client] of [["direct", direct], ["faked", faked]] as const) {
      const t0 = performance.now();
      await call(client);
      times[name].push(performance.now() - t0);
    }
  }
  const [d, f] = [median(times.direct), median(times.faked)];
  // The session file is appended to, never rewritten: the last calls cost what the first did.
  const [early, late] = [median(times.faked.slice(0, 100)), median(times.faked.slice(-100))];
  console.log(
    `through stn faker, first 100 calls: median ${early.toFixed(2)} ms, last 100: ${late.toFixed(2)} ms`,
  );
  console.log(`filesystem server directly:        median ${d.toFixed(2)} ms (${CALLS} calls)`);
  console.log(`through stn faker --passthrough:   median ${f.toFixed(2)} ms (${CALLS} calls)`);
  console.log(`ratio faker / direct: ${(f / d).toFixed(2)}x`);
  tableRow({
    figure: "MCP tool call through `stn faker --passthrough`",
    value: `${f.toFixed(2)} ms`,
    baseline: `${d.toFixed(2)} ms (the server directly)`,
    ratio: `${(f / d).toFixed(2)}x`,
    target: "one stdio hop and a session write",
  });
} finally {
  await direct.close();
  await faked.close();
  await Deno.remove(home, { recursive: true }).catch(() => {});
}
