/**
 * Sandbox benchmark: the Docker backend stn uses against the `docker` CLI doing the same work on the
 * same container, in the same run. Exec and file operations are measured both ways stn reaches a
 * container — its supervisor's channel (the default) and one docker exec per operation (the fallback,
 * `sandbox.channel: false`) — alternating with the CLI round by round. Measures: open (cold container
 * start, and from the warm pool), exec round trip p50/p99, write and read of 1 KiB, 1 MiB, 50 MiB.
 * Prints each pair and the ratio stn/CLI (below 1 = stn faster).
 *
 *   deno run -A scripts/bench/sandbox.ts [exec_runs=50] [file_runs=7]
 *
 * Needs the image stn-test/busybox:latest (scripts/images/busybox).
 */
import { Buffer } from "node:buffer";
import { DockerBackend, dockerClient } from "../../src/sandbox/docker.ts";
import { tableRow } from "./table.ts";
import { ConfigSchema } from "../../src/config/schema.ts";
import { openDatabase } from "../../src/db/database.ts";
import type { FileStore } from "../../src/files/store.ts";
import { stationId } from "../../src/sandbox/ledger.ts";
import { SandboxService } from "../../src/sandbox/service.ts";

const EXEC_RUNS = Number(Deno.args[0] ?? 50);
const FILE_RUNS = Number(Deno.args[1] ?? 7);
const IMAGE = "stn-test/busybox:latest";
const LABELS = { "dev.stn.session": "bench", "dev.stn.scope": "agent" };

const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];
const fmt = (ms: number) => ms < 10 ? ms.toFixed(2) : ms.toFixed(1);

async function time(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

async function docker(...args: string[]): Promise<string> {
  const out = await new Deno.Command("docker", { args, stdout: "piped", stderr: "piped" }).output();
  if (!out.success) throw new Error(`docker ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
  return new TextDecoder().decode(out.stdout).trim();
}

const limits = {
  user: "1000:1000",
  memoryMb: 2048,
  diskMb: 1024,
  tmpMb: 256,
  cpus: 2,
  pidsLimit: 256,
  pullTimeoutMs: 60_000,
};
const backend = new DockerBackend(dockerClient(), { ...limits, channel: true });
const fallback = new DockerBackend(dockerClient(), { ...limits, channel: false });
const PATHS = [["", backend], [", docker exec path", fallback]] as const;
const made: string[] = [];
const rows: [string, number, number][] = [];
const row = (name: string, stn: number, cli: number) => {
  rows.push([name, stn, cli]);
  console.error(`${name}: stn ${fmt(stn)} ms, docker CLI ${fmt(cli)} ms`);
};

try {
  await backend.ensureImage(IMAGE);
  // Open, cold: a new container from the image, started and ready for an exec.
  const openStn: number[] = [];
  const openCli: number[] = [];
  for (let i = 0; i < 5; i++) {
    openStn.push(
      await time(async () =>
        made.push(await backend.create({ image: IMAGE, network: false, labels: LABELS }))
      ),
    );
    openCli.push(
      await time(async () =>
        made.push(
          await docker(
            "run",
            "-d",
            "--network",
            "none",
            "--user",
            "1000:1000",
            "--cap-drop",
            "ALL",
            "--security-opt",
            "no-new-privileges",
            "--pids-limit",
            "256",
            "--memory",
            "2g",
            "--cpus",
            "2",
            "--label",
            "dev.stn.managed=true",
            "--label",
            "dev.stn.session=bench",
            "-w",
            "/workspace",
            "--entrypoint",
            "sleep",
            IMAGE,
            "2147483647",
          ),
        )
      ),
    );
  }
  row("open (p50)", pct(openStn, 0.5), pct(openCli, 0.5));

  // Open from the warm pool: the whole SandboxService.open (ledger row included) with `sandbox.pool`
  // holding one ready container, refilled between opens.
  {
    const home = await Deno.makeTempDir({ prefix: "stn-bench-pool-" });
    const db = openDatabase(`${home}/station.db`);
    const config = ConfigSchema.parse({
      sandbox: { images: { sh: IMAGE }, default_runtime: "sh", pool: { sh: { size: 1 } } },
    }).sandbox;
    // Opening a session never touches the file store.
    const service = new SandboxService(backend, {
      db,
      files: undefined as unknown as FileStore,
      config,
      stationId: stationId(db),
    });
    service.pool.start();
    const openPool: number[] = [];
    try {
      for (let i = 0; i < 5; i++) {
        await service.pool.filled();
        let container = "";
        openPool.push(await time(async () => (container = (await service.open({})).session.container_id)));
        made.push(container);
      }
    } finally {
      await service.stop();
      db.close();
      await Deno.remove(home, { recursive: true });
    }
    row("open from the pool (p50)", pct(openPool, 0.5), pct(openCli, 0.5));
  }

  const id = made[0];
  const cliId = made[1];
  await docker("exec", "-u", "0", cliId, "chown", "1000:1000", "/workspace").catch(() => {});

  const execStn: number[][] = PATHS.map(() => []);
  const execCli: number[] = [];
  const opts = { timeoutMs: 30_000, maxOutputBytes: 1 << 20 };
  await backend.exec(id, { ...opts, cmd: ["true"] }); // opens the container's channel
  for (let i = 0; i < EXEC_RUNS; i++) {
    for (const [j, [, b]] of PATHS.entries()) {
      execStn[j].push(await time(() => b.exec(id, { ...opts, cmd: ["true"] })));
    }
    execCli.push(await time(() => docker("exec", id, "true")));
  }
  for (const [j, [suffix]] of PATHS.entries()) {
    row(`exec round trip p50${suffix}`, pct(execStn[j], 0.5), pct(execCli, 0.5));
    row(`exec round trip p99${suffix}`, pct(execStn[j], 0.99), pct(execCli, 0.99));
  }

  const tmp = await Deno.makeTempDir({ prefix: "stn-bench-" });
  try {
    for (const [label, size] of [["1 KiB", 1024], ["1 MiB", 1 << 20], ["50 MiB", 50 << 20]] as const) {
      const data = Buffer.alloc(size, 7);
      const local = `${tmp}/f.bin`;
      await Deno.writeFile(local, data);
      const runs = size > (1 << 20) ? Math.min(FILE_RUNS, 3) : FILE_RUNS;
      const w: number[][] = PATHS.map(() => []);
      const r: number[][] = PATHS.map(() => []);
      const wc: number[] = [];
      const rc: number[] = [];
      for (let i = 0; i < runs; i++) {
        for (const [j, [, b]] of PATHS.entries()) {
          w[j].push(await time(() => b.writeFile(id, "f.bin", { data, size })));
          r[j].push(
            await time(async () => {
              const file = await b.readFile(id, "f.bin", size);
              let n = 0;
              for await (const chunk of file.stream) n += (chunk as Buffer).length;
              if (n !== size) throw new Error(`read ${n} of ${size} bytes`);
            }),
          );
        }
        wc.push(await time(() => docker("cp", local, `${id}:/workspace/f.bin`)));
        rc.push(await time(() => docker("cp", `${id}:/workspace/f.bin`, `${tmp}/back.bin`)));
      }
      for (const [j, [suffix]] of PATHS.entries()) {
        row(`write ${label} (p50)${suffix}`, pct(w[j], 0.5), pct(wc, 0.5));
        row(`read ${label} (p50)${suffix}`, pct(r[j], 0.5), pct(rc, 0.5));
      }
    }
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
} finally {
  for (const c of made) await backend.destroy(c);
  await fallback.close();
}

console.log(`\nsandbox benchmark (stn Docker backend vs docker CLI, same containers, same run)\n`);
console.log(
  `${"operation".padEnd(40)}${"stn ms".padStart(10)}${"CLI ms".padStart(10)}${"stn/CLI".padStart(10)}`,
);
for (const [name, stn, cli] of rows) {
  console.log(
    `${name.padEnd(40)}${fmt(stn).padStart(10)}${fmt(cli).padStart(10)}${
      (stn / cli).toFixed(2).padStart(10)
    }`,
  );
}
const targets: Record<string, string> = {
  "open (p50)": "cold: unchanged or better",
  "open from the pool (p50)": "≤ 100 ms",
  "exec round trip p50": "≤ 0.5× `docker exec` (≤ 25 ms)",
  "write 1 KiB (p50)": "≤ 10 ms",
  "read 1 KiB (p50)": "≤ 10 ms",
  "write 1 MiB (p50)": "≤ 25 ms",
  "read 1 MiB (p50)": "≤ 25 ms",
  "exec round trip p50, docker exec path": "fallback (sandbox.channel: false)",
  "write 1 KiB (p50), docker exec path": "fallback",
  "read 1 KiB (p50), docker exec path": "fallback",
  "write 1 MiB (p50), docker exec path": "fallback",
  "read 1 MiB (p50), docker exec path": "fallback",
};
const cliName = (name: string) =>
  name.startsWith("open") ? "docker run -d" : name.startsWith("exec") ? "docker exec" : "docker cp";
for (const [name, stn, cli] of rows) {
  if (!targets[name]) continue;
  tableRow({
    figure: `sandbox ${name}`,
    value: `${fmt(stn)} ms`,
    baseline: `${cliName(name)} ${fmt(cli)} ms`,
    ratio: `×${(stn / cli).toPrecision(2)}`,
    target: targets[name],
  });
}
const oneMiB = rows.filter(([n]) => n.includes(" 1 MiB"));
console.log(
  `\n1 MiB write/read under 100 ms: ${oneMiB.every(([, stn]) => stn < 100) ? "yes" : "NO"} (` +
    oneMiB.map(([n, stn]) => `${n} ${fmt(stn)} ms`).join(", ") + ")",
);
