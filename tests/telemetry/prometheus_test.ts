import { assert, assertEquals, assertThrows } from "../helpers/assert.ts";
import { Counter, exposition, gauge, Histogram } from "../../src/telemetry/prometheus.ts";

/** promtool (installed with prometheus by scripts/setup) lints a page the way Prometheus parses it. */
async function promtoolCheck(page: string): Promise<{ ok: boolean; output: string }> {
  const child = new Deno.Command("promtool", {
    args: ["check", "metrics"],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(page));
  await writer.close();
  const out = await child.output();
  const text = new TextDecoder();
  return { ok: out.success, output: text.decode(out.stdout) + text.decode(out.stderr) };
}

Deno.test("prometheus: counters, histograms and scraped gauges are written in the text format promtool accepts", async () => {
  const plain = new Counter({ name: "t_plain_total", help: "no labels" });
  const runs = new Counter({
    name: "t_runs_total",
    help: 'runs by "workflow"\\ and status',
    labelNames: ["w"],
  });
  const times = new Histogram({
    name: "t_seconds",
    help: "times",
    labelNames: ["kind"],
    buckets: [1, 0.1, 10],
  });
  const bytes = gauge("t_bytes", "read at scrape time", () => Promise.resolve([{ labels: [], value: NaN }]));
  runs.inc({ w: 'a"b\\c\nd' });
  runs.inc({ w: 'a"b\\c\nd' }, 2);
  runs.inc({ w: "other" });
  for (const v of [0.05, 0.1, 3, 50]) times.observe({ kind: "x" }, v);

  const page = await exposition([plain, runs, times, bytes]);
  assertEquals(
    page,
    [
      "# HELP t_plain_total no labels\n# TYPE t_plain_total counter\nt_plain_total 0\n",
      '# HELP t_runs_total runs by "workflow"\\\\ and status\n# TYPE t_runs_total counter\n' +
      't_runs_total{w="a\\"b\\\\c\\nd"} 3\nt_runs_total{w="other"} 1\n',
      "# HELP t_seconds times\n# TYPE t_seconds histogram\n" +
      't_seconds_bucket{kind="x",le="0.1"} 2\nt_seconds_bucket{kind="x",le="1"} 2\n' +
      't_seconds_bucket{kind="x",le="10"} 3\nt_seconds_bucket{kind="x",le="+Inf"} 4\n' +
      't_seconds_sum{kind="x"} 53.15\nt_seconds_count{kind="x"} 4\n',
      "# HELP t_bytes read at scrape time\n# TYPE t_bytes gauge\nt_bytes NaN\n",
    ].join("\n"),
  );
  const lint = await promtoolCheck(page);
  assert(lint.ok, lint.output);
});

Deno.test("prometheus: a counter refuses to go down", () => {
  const c = new Counter({ name: "t_total", help: "h" });
  const err = assertThrows(() => c.inc(undefined, -1), RangeError);
  assertEquals(err.message, "t_total: a counter cannot be increased by -1");
  assertThrows(() => c.inc(undefined, NaN), RangeError);
});
