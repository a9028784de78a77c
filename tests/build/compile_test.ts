import { join, relative } from "node:path";
import {
  binaryPlatform,
  embeddedPaths,
  INCLUDES,
  missingFiles,
  ROOT,
  runtimeFiles,
} from "../../scripts/compile.ts";
import { assetsAt, EMBED_DIR } from "../../src/build/embedded.ts";
import { hex } from "../../src/lib/hex.ts";
import { findProgram } from "../../src/lib/programs.ts";
import { VERSION } from "../../src/version.ts";
import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";

const decoder = new TextDecoder();

/** `deno task compile` with a stand-in runtime base (DENORT_BIN): it resolves and embeds the whole graph. */
async function compile(args: string[], env: Record<string, string> = {}) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", join(ROOT, "scripts/compile.ts"), ...args],
    cwd: ROOT,
    env: { DENORT_BIN: Deno.execPath(), ...env },
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { code: out.code, stdout: decoder.decode(out.stdout), stderr: decoder.decode(out.stderr) };
}

/** Files src/ opens next to a module (`new URL("./x", import.meta.url)`), relative to the checkout. */
function filesNextToModules(dir = join(ROOT, "src")): string[] {
  return [...Deno.readDirSync(dir)].flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory) return filesNextToModules(path);
    if (!/\.tsx?$/.test(e.name)) return [];
    const text = Deno.readTextFileSync(path);
    return [...text.matchAll(/new URL\("(\.[^"]*[^/"])", import\.meta\.url\)/g)]
      .map((m) => relative(ROOT, join(path, "..", m[1])));
  });
}

Deno.test("compile: main.ts compiles with every runtime file and the nats-server embedded, as the manifest records", async () => {
  const nats = findProgram("nats-server");
  assert(nats, "scripts/setup installs nats-server");
  const dir = await Deno.makeTempDir({ prefix: "stn-compile-" });
  try {
    const r = await compile(["-o", join(dir, "stn")], { NATS_SERVER_BIN: nats });
    assertEquals(r.code, 0, r.stderr);
    assertStringIncludes(r.stdout, `built ${join(dir, "stn")} for ${Deno.build.target} with nats-server`);
    assert(Deno.statSync(join(dir, "stn")).size > 0);

    const manifest = assetsAt(join(ROOT, EMBED_DIR)).manifest;
    const bytes = await Deno.readFile(nats);
    assertEquals(manifest.nats_server?.sha256, hex(await crypto.subtle.digest("SHA-256", bytes)));
    assertEquals(manifest.nats_server?.size, bytes.length);
    assertEquals(manifest.target, Deno.build.target);

    // The script checked the listing; check it again here, against the files named by kind.
    const embedded = embeddedPaths(r.stderr);
    const wanted = runtimeFiles(manifest);
    for (
      const f of [
        "src/db/checkpoint_worker.ts",
        "src/ui/assets/app.js",
        "src/ui/assets/style.css",
        "src/sandbox/channel/supervisor_binary.ts",
        "src/db/migrations/0001_station_meta.ts",
        "docs/workflows.md",
        `${EMBED_DIR}/manifest.json`,
        `${EMBED_DIR}/nats-server`,
      ]
    ) assert(wanted.includes(f), `${f} is a runtime file`);
    assert(wanted.some((f) => /\/htmx\.org\/[^/]+\/dist\/htmx\.min\.js$/.test(f)), "the dashboard's htmx");
    assertEquals(missingFiles(embedded, wanted), []);
    // The module that looks them up sits in the same tree, so `../../.build/embed` from it finds them.
    assertEquals(missingFiles(embedded, ["src/build/embedded.ts"]), []);
    // A file the binary does not hold is reported: the sandbox supervisor's C source is not embedded.
    assertEquals(missingFiles(embedded, ["src/sandbox/channel/supervisor/main.c"]), [
      "src/sandbox/channel/supervisor/main.c",
    ]);
    // Every file a module opens beside itself is a runtime file, so a new Worker or asset cannot be forgotten.
    // scripts/stn is named, never read: `stn mcp config` writes the checkout's launcher into a client's config
    // when stn runs from a checkout (a compiled stn names itself).
    const namedOnly = ["scripts/stn"];
    for (const f of filesNextToModules().filter((f) => !namedOnly.includes(f))) {
      assert(wanted.includes(f), `${f} is opened at run time: add it`);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("compile: a nats-server for another machine, a missing one and an unknown target are refused before compiling", async () => {
  const nats = findProgram("nats-server")!;
  assertEquals(binaryPlatform((await Deno.readFile(nats)).subarray(0, 64)), { os: "linux", arch: "x86_64" });
  const dir = await Deno.makeTempDir({ prefix: "stn-compile-" });
  try {
    const wrong = await compile([
      "-o",
      join(dir, "stn"),
      "--target",
      "aarch64-apple-darwin",
      "--nats-server",
      nats,
    ]);
    assertEquals(wrong.code, 1);
    assertStringIncludes(wrong.stderr, "is a nats-server for linux x86_64, not for aarch64-apple-darwin");
    const none = await compile(["-o", join(dir, "stn"), "--target", "aarch64-unknown-linux-gnu"]);
    assertEquals(none.code, 2);
    assertStringIncludes(none.stderr, "no nats-server to embed for aarch64-unknown-linux-gnu");
    const bad = await compile(["--target", "sparc-sun-solaris"]);
    assertEquals(bad.code, 2);
    assertStringIncludes(bad.stderr, "unknown target 'sparc-sun-solaris'");
    assertEquals([...Deno.readDirSync(dir)], [], "nothing was written");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("compile: the include list names files that exist", () => {
  for (const f of INCLUDES) assert(f === EMBED_DIR || Deno.statSync(join(ROOT, f)).isFile, f);
});

// scripts/release stages .build/embed as the compile above does: in this file, so the two never run at once.
async function release(args: string[]) {
  const out = await new Deno.Command(join(ROOT, "scripts/release"), {
    args,
    stdout: "piped",
    stderr: "piped",
  })
    .output();
  const text = new TextDecoder();
  return { code: out.code, stderr: text.decode(out.stderr) };
}

Deno.test("release: builds a target into the output folder with SHA256SUMS that sha256sum -c accepts; a target it cannot build fails the run", async () => {
  const out = await Deno.makeTempDir({ prefix: "stn-release-" });
  try {
    const host = Deno.build.target;
    // The stand-in base (this deno) in place of a downloaded one: the output is not runnable, its sums are real.
    const r = await release([
      "--target",
      host,
      "--target",
      "aarch64-unknown-linux-gnu",
      "--denort",
      `${host}=${Deno.execPath()}`,
      "--out",
      out,
    ]);
    assertEquals(r.code, 1, r.stderr);
    const name = `stn-${VERSION}-${host}`;
    assertStringIncludes(r.stderr, `release: ${host}: built ${name}, with nats-server`);
    assertStringIncludes(r.stderr, "release: aarch64-unknown-linux-gnu: cannot build: no nats-server for");
    assertStringIncludes(r.stderr, "release: not built: aarch64-unknown-linux-gnu");
    assertEquals([...Deno.readDirSync(out)].map((e) => e.name).sort(), ["SHA256SUMS", name]);
    const verify = await new Deno.Command("sha256sum", {
      args: ["-c", "SHA256SUMS"],
      cwd: out,
      stdout: "piped",
    })
      .output();
    assertEquals(new TextDecoder().decode(verify.stdout), `${name}: OK\n`);
  } finally {
    await Deno.remove(out, { recursive: true });
  }
});
