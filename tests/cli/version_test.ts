import { join } from "node:path";
import { findProgram } from "../../src/lib/programs.ts";
import { VERSION } from "../../src/version.ts";
import { assert, assertEquals, assertMatch, assertStringIncludes } from "../helpers/assert.ts";
import { tempHome } from "../helpers/home.ts";
import { runStn } from "../helpers/stn.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

async function git(args: string[]): Promise<string> {
  const out = await new Deno.Command("git", { args: ["-C", ROOT, ...args], stdout: "piped" }).output();
  assert(out.success, `git ${args.join(" ")}`);
  return new TextDecoder().decode(out.stdout).trim();
}

Deno.test("stn version --json: stn's version, git commit, build date, Deno version and the nats-server it runs", async () => {
  const home = await tempHome();
  try {
    const r = await runStn(["version", "--json"], { env: home.env });
    assertEquals(r.code, 0, r.stderr);
    const v = JSON.parse(r.stdout);
    const nats = findProgram("nats-server")!;
    const natsVersion = /v?(\d+\.\d+\.\d+)/.exec(
      new TextDecoder().decode((await new Deno.Command(nats, { args: ["--version"] }).output()).stdout),
    )![1];
    assertEquals(v, {
      version: VERSION,
      commit: await git(["rev-parse", "HEAD"]),
      build_date: await git(["log", "-1", "--format=%cI"]),
      deno: Deno.version.deno,
      build: "checkout",
      nats_server: { version: natsVersion, path: nats, source: "path" },
    });

    const text = await runStn(["version"], { env: home.env });
    assertEquals(text.code, 0, text.stderr);
    for (const label of ["stn:", "commit:", "build date:", "deno:", "nats-server:"]) {
      assertStringIncludes(text.stdout, label);
    }
    assertStringIncludes(text.stdout, `${natsVersion} at ${nats} (found on PATH or in the usual places)`);

    // --version stays the bare number (scripts and the startup benchmark rely on it).
    const short = await runStn(["--version"], { env: home.env });
    assertEquals(short.stdout, `${VERSION}\n`);
  } finally {
    await home.cleanup();
  }
});

Deno.test("stn version: no git is no failure, and a configured nats-server is named as such", async () => {
  const home = await tempHome();
  try {
    const nats = findProgram("nats-server")!;
    const empty = home.path("empty-bin");
    Deno.mkdirSync(empty);
    const r = await runStn(["version", "--json"], {
      env: { ...home.env, PATH: empty, STN_NATS_SERVER_BIN: nats },
    });
    assertEquals(r.code, 0, r.stderr);
    const v = JSON.parse(r.stdout);
    assertEquals([v.commit, v.build_date], [null, null]);
    assertEquals([v.nats_server.path, v.nats_server.source], [nats, "configured"]);

    const missing = await runStn(["version", "--json"], {
      env: { ...home.env, STN_NATS_SERVER_BIN: join(empty, "nats-server") },
    });
    assertEquals(missing.code, 0, missing.stderr);
    const m = JSON.parse(missing.stdout).nats_server;
    assertEquals([m.path, m.source], [null, null]);
    assertMatch(m.problem, /nats-server' was not found/);
  } finally {
    await home.cleanup();
  }
});
