import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { installBundle } from "../../src/environments/bundle/install.ts";
import { packEnvironment } from "../../src/environments/bundle/pack.ts";
import { StationError } from "../../src/errors.ts";
import { assert, assertEquals, assertRejects, assertStringIncludes } from "../helpers/assert.ts";
import { hugeMemberTarGz, manifestFor, type Member, tarGz } from "./bundle_fixtures.ts";

const AGENT: Member = { name: "agents/hello.prompt", body: "---\nmax_steps: 1\n---\n{{userInput}}\n" };

/** Everything under a folder, recursively, so "nothing was written" is checked, not assumed. */
function tree(dir: string, prefix = ""): string[] {
  const out: string[] = [];
  for (const e of Deno.readDirSync(dir)) {
    out.push(prefix + e.name);
    if (e.isDirectory) out.push(...tree(join(dir, e.name), `${prefix}${e.name}/`));
  }
  return out.sort();
}

async function refused(
  bytes: Uint8Array,
  code: string,
  text: string,
  target = "shared",
): Promise<StationError> {
  const root = await Deno.makeTempDir({ prefix: "stn-bundle-" });
  const envs = join(root, "environments");
  await Deno.mkdir(join(envs, "default"), { recursive: true });
  try {
    const before = tree(root);
    const err = await assertRejects(() => installBundle(envs, bytes, { environment: target }), StationError);
    assertEquals((err as StationError).code, code, err.message);
    assertStringIncludes(err.message, text);
    assert((err as StationError).hint, "a refusal says what a bundle may hold");
    assertEquals(tree(root), before, "a refused bundle writes nothing, not even a staging folder");
    return err as StationError;
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

Deno.test("bundle install refuses hostile bundles with a clear error and writes nothing", async (t) => {
  await t.step("an absolute path", async () => {
    const evil = { name: "/etc/cron.d/evil", body: "* * * * * root sh\n" };
    // tar-stream keeps the name as given; the reader must not.
    await refused(await tarGz([manifestFor([AGENT]), AGENT, evil]), "bundle_invalid", "an absolute path");
  });
  await t.step("a path that climbs out with ..", async () => {
    const evil = { name: "agents/../../../outside.prompt", body: "x" };
    const err = await refused(await tarGz([manifestFor([AGENT]), AGENT, evil]), "bundle_invalid", "`..`");
    assertEquals(err.details, { member: "agents/../../../outside.prompt" });
  });
  await t.step("a symlink out (and a hard link)", async () => {
    const link: Member = { name: "agents/x.prompt", type: "symlink", linkname: "/etc/passwd" };
    await refused(
      await tarGz([manifestFor([AGENT]), AGENT, link]),
      "bundle_invalid",
      "symlink (to /etc/passwd)",
    );
    const hard: Member = { name: "agents/y.prompt", type: "link", linkname: "agents/hello.prompt" };
    await refused(await tarGz([manifestFor([AGENT]), AGENT, hard]), "bundle_invalid", "hard link");
  });
  await t.step("a device or fifo", async () => {
    const fifo: Member = { name: "agents/p.prompt", type: "fifo" };
    await refused(await tarGz([manifestFor([AGENT]), AGENT, fifo]), "bundle_invalid", "fifo");
  });
  await t.step("10,000 files", async () => {
    const many: Member[] = Array.from(
      { length: 10_000 },
      (_, i) => ({ name: `agents/a${i}.prompt`, body: "x" }),
    );
    await refused(await tarGz([manifestFor(many), ...many]), "bundle_too_large", "more than 1000 members");
  });
  await t.step("a 2 GiB member (refused on its header, before reading)", async () => {
    await refused(
      hugeMemberTarGz("agents/big.prompt", 2 * 1024 ** 3),
      "bundle_too_large",
      "agents/big.prompt is 2.1 GB",
    );
  });
  await t.step("a gzip bomb (stopped while inflating)", async () => {
    const bomb = new Uint8Array(gzipSync(new Uint8Array(80 * 1024 * 1024)));
    assert(bomb.length < 200 * 1024, "80 MiB of zeros packs to a small file");
    await refused(bomb, "bundle_too_large", "unpacks to more than");
  });
  await t.step("a file whose checksum does not match the manifest", async () => {
    const manifest = manifestFor([AGENT]);
    const changed = { ...AGENT, body: "---\nmax_steps: 1\n---\nsomething else\n" };
    await refused(await tarGz([manifest, changed]), "bundle_invalid", "does not match its checksum");
  });
  await t.step("a member the manifest does not list, and a listed file that is absent", async () => {
    const extra = {
      name: "workflows/sneaky.workflow.yaml",
      body: "id: sneaky\nstates: [{id: a, type: inject, data: {}}]\n",
    };
    await refused(
      await tarGz([manifestFor([AGENT]), AGENT, extra]),
      "bundle_invalid",
      "not listed in manifest.json",
    );
    await refused(await tarGz([manifestFor([AGENT])]), "bundle_invalid", "does not hold");
  });
  await t.step("files outside the layout: variables.yml, dotfiles, scripts", async () => {
    for (const name of ["variables.yml", ".env", "agents/run.sh", "workflows/.hidden.workflow.yaml"]) {
      const m = { name, body: "X=1\n" };
      await refused(await tarGz([manifestFor([AGENT]), AGENT, m]), "bundle_invalid", name);
    }
  });
  await t.step("no manifest, a bad manifest, not gzip at all", async () => {
    await refused(await tarGz([AGENT]), "bundle_invalid", "no manifest.json");
    await refused(
      await tarGz([{ name: "manifest.json", body: "{" }, AGENT]),
      "bundle_invalid",
      "manifest.json is not valid JSON",
    );
    await refused(
      await tarGz([manifestFor([AGENT], { format: "other/9" }), AGENT]),
      "bundle_invalid",
      "/format",
    );
    await refused(new TextEncoder().encode("PK\x03\x04 a zip"), "bundle_invalid", "not gzip");
    await refused(
      new Uint8Array(gzipSync(new TextEncoder().encode("not a tar archive at all"))),
      "bundle_invalid",
      "tar",
    );
  });
  await t.step("an environment name in the manifest that is not a folder name", async () => {
    const bytes = await tarGz([manifestFor([AGENT], { name: "../up" }), AGENT]);
    const root = await Deno.makeTempDir();
    try {
      const err = await assertRejects(() => installBundle(join(root, "environments"), bytes), StationError);
      assertEquals((err as StationError).code, "invalid_environment");
      assertEquals(tree(root), []);
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  });
});

Deno.test("bundle create refuses a link out of the environment and a literal secret", async () => {
  const root = await Deno.makeTempDir({ prefix: "stn-bundle-" });
  const envs = join(root, "environments");
  const dir = join(envs, "default");
  try {
    await Deno.mkdir(join(dir, "agents"), { recursive: true });
    await Deno.mkdir(join(dir, "mcp-configs"), { recursive: true });
    await Deno.writeTextFile(join(root, "private.key"), "-----BEGIN PRIVATE KEY-----\n");
    await Deno.symlink(join(root, "private.key"), join(dir, "agents", "leak.prompt"));
    let err = await assertRejects(() => packEnvironment(envs, "default"), StationError) as StationError;
    assertEquals(err.code, "unsafe_path");
    assertStringIncludes(err.message, "agents/leak.prompt");
    await Deno.remove(join(dir, "agents", "leak.prompt"));

    // A link inside the folder is fine: it is packed as the file it points to.
    await Deno.writeTextFile(join(dir, "agents", "a.prompt"), "---\nmax_steps: 1\n---\nhi\n");
    await Deno.symlink(join(dir, "agents", "a.prompt"), join(dir, "agents", "b.prompt"));
    assertEquals((await packEnvironment(envs, "default")).manifest.contents.agents, ["a", "b"]);

    const literal = {
      mcpServers: {
        gh: { command: "gh-mcp", env: { GITHUB_TOKEN: "ghp_literal" } },
        api: { url: "https://x.example/mcp", headers: { Authorization: "Bearer {{ .API_TOKEN }}" } },
      },
    };
    await Deno.writeTextFile(join(dir, "mcp-configs", "gh.json"), JSON.stringify(literal));
    err = await assertRejects(() => packEnvironment(envs, "default"), StationError) as StationError;
    assertEquals(err.code, "bundle_secret");
    assertStringIncludes(err.message, "mcpServers.gh.env.GITHUB_TOKEN");
    assert(!err.message.includes("ghp_literal"), "the refusal does not print the secret");
    assertStringIncludes(err.hint!, "{{ .GITHUB_TOKEN }}");
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("bundle install: a new environment, then --force over it keeps variables.yml and never writes through a link", async () => {
  const root = await Deno.makeTempDir({ prefix: "stn-bundle-" });
  const envs = join(root, "environments");
  try {
    const bytes = await tarGz([manifestFor([AGENT]), AGENT]);
    const first = await installBundle(envs, bytes, { environment: "shared" });
    assertEquals([first.created, first.files], [true, ["agents/hello.prompt"]]);
    assertEquals(tree(join(envs, "shared")), ["agents", "agents/hello.prompt", "mcp-configs", "workflows"]);

    const again = await assertRejects(
      () => installBundle(envs, bytes, { environment: "shared" }),
      StationError,
    );
    assertEquals((again as StationError).code, "environment_exists");

    await Deno.writeTextFile(join(envs, "shared", "variables.yml"), "KEEP: me\n");
    await Deno.writeTextFile(join(envs, "shared", "agents", "hello.prompt"), "edited locally\n");
    const forced = await installBundle(envs, bytes, { environment: "shared", force: true });
    assertEquals(forced.created, false);
    assertEquals(await Deno.readTextFile(join(envs, "shared", "agents", "hello.prompt")), AGENT.body);
    assertEquals(await Deno.readTextFile(join(envs, "shared", "variables.yml")), "KEEP: me\n");

    // A folder of the target that is a link elsewhere is not written through.
    const outside = join(root, "outside");
    await Deno.mkdir(outside);
    await Deno.remove(join(envs, "shared", "agents"), { recursive: true });
    await Deno.symlink(outside, join(envs, "shared", "agents"));
    const err = await assertRejects(
      () => installBundle(envs, bytes, { environment: "shared", force: true }),
      StationError,
    );
    assertEquals((err as StationError).code, "unsafe_path");
    assertEquals(tree(outside), []);
    assertEquals(tree(envs).filter((p) => p.startsWith(".")), [], "no staging folder is left behind");
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
