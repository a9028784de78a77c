import { join } from "node:path";
import { jetstreamManager } from "@nats-io/jetstream";
import { stage } from "../../scripts/compile.ts";
import { assetsAt, embeddedAssets, embedDirFrom } from "../../src/build/embedded.ts";
import { buildInfo } from "../../src/build/info.ts";
import { StationError } from "../../src/errors.ts";
import { hex } from "../../src/lib/hex.ts";
import { findProgram } from "../../src/lib/programs.ts";
import { connectNats } from "../../src/nats/connection.ts";
import { chooseNatsServer, extractedPath, locateNatsServer } from "../../src/nats/locate.ts";
import { ManagedNatsServer } from "../../src/nats/server.ts";
import { assert, assertEquals, assertRejects } from "../helpers/assert.ts";

const INSTALLED = findProgram("nats-server")!;

/** A PATH without the directories holding nats-server, and no standard directories: a machine without it. */
function noNatsOnPath(): { env: Record<string, string>; dirs: string[] } {
  const PATH = (Deno.env.get("PATH") ?? "").split(":").filter((d) =>
    d && !findProgram(join(d, "nats-server"))
  )
    .join(":");
  return { env: { PATH }, dirs: [] };
}

async function sha256File(path: string): Promise<string> {
  return hex(await crypto.subtle.digest("SHA-256", await Deno.readFile(path)));
}

/** A compiled stn's embed directory, laid out by the compile script itself, around the installed nats-server. */
async function stagedAssets(dir: string) {
  await stage({ target: Deno.build.target as "x86_64-unknown-linux-gnu", natsServer: INSTALLED }, dir);
  return assetsAt(dir);
}

Deno.test("embedded nats-server: with none on the PATH, it is extracted once, verified, and the managed server runs from the copy", async () => {
  assert(INSTALLED, "scripts/setup installs nats-server");
  const tmp = await Deno.makeTempDir({ prefix: "stn-embedded-" });
  try {
    const assets = await stagedAssets(join(tmp, "embed"));
    const nats = assets.manifest.nats_server!;
    assertEquals(
      nats.sha256,
      await sha256File(INSTALLED),
      "the manifest records the embedded binary's digest",
    );
    const binDir = join(tmp, "home", "bin");
    const lookup = { ...noNatsOnPath(), binDir, assets };
    assertEquals(findProgram("nats-server", lookup), undefined, "this lookup sees no nats-server");
    assertEquals(chooseNatsServer("nats-server", lookup), {
      path: extractedPath(binDir),
      source: "embedded",
      version: nats.version,
    });

    const choice = await locateNatsServer("nats-server", lookup);
    assertEquals(choice.path, join(binDir, "nats-server"));
    assertEquals(await sha256File(choice.path), nats.sha256);
    assertEquals((await Deno.stat(choice.path)).mode! & 0o777, 0o755);

    const server = await ManagedNatsServer.start({
      bin: choice.path,
      storeDir: join(tmp, "home", "nats"),
      pidFile: join(tmp, "home", "run", "nats.pid"),
    });
    try {
      // The process really is the extracted copy, and it serves JetStream.
      assertEquals(Deno.readLinkSync(`/proc/${server.pid}/exe`), choice.path);
      const nc = await connectNats({ url: server.url, ...server.credentials }, "embedded-test");
      try {
        assertEquals((await (await jetstreamManager(nc)).getAccountInfo()).streams, 0);
      } finally {
        await nc.close();
      }
    } finally {
      await server.stop();
    }

    // Extracted once: a second lookup keeps the verified copy (same inode).
    const inode = (await Deno.stat(choice.path)).ino;
    await locateNatsServer("nats-server", lookup);
    assertEquals((await Deno.stat(choice.path)).ino, inode);
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});

Deno.test("embedded nats-server: a corrupted or non-executable copy is refused and extracted again", async () => {
  const tmp = await Deno.makeTempDir({ prefix: "stn-embedded-" });
  try {
    const assets = await stagedAssets(join(tmp, "embed"));
    const binDir = join(tmp, "bin");
    const lookup = { ...noNatsOnPath(), binDir, assets };
    const path = (await locateNatsServer("nats-server", lookup)).path;

    const bytes = await Deno.readFile(path);
    bytes[bytes.length >> 1] ^= 0xff;
    await Deno.writeFile(path, bytes);
    assert(await sha256File(path) !== assets.manifest.nats_server!.sha256);
    await locateNatsServer("nats-server", lookup);
    assertEquals(
      await sha256File(path),
      assets.manifest.nats_server!.sha256,
      "the corrupted copy was replaced",
    );

    await Deno.writeTextFile(path, "#!/bin/sh\necho not nats\n"); // a different, shorter file
    await locateNatsServer("nats-server", lookup);
    assertEquals(await sha256File(path), assets.manifest.nats_server!.sha256);

    await Deno.chmod(path, 0o644);
    await locateNatsServer("nats-server", lookup);
    assertEquals((await Deno.stat(path)).mode! & 0o777, 0o755);
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});

Deno.test("embedded nats-server: a damaged embedded copy is refused and nothing is extracted", async () => {
  const tmp = await Deno.makeTempDir({ prefix: "stn-embedded-" });
  try {
    const assets = await stagedAssets(join(tmp, "embed"));
    const embedded = join(assets.dir, assets.manifest.nats_server!.file);
    const bytes = await Deno.readFile(embedded);
    bytes[100] ^= 0xff;
    await Deno.writeFile(embedded, bytes);
    const binDir = join(tmp, "bin");
    const err = await assertRejects(() =>
      locateNatsServer("nats-server", { ...noNatsOnPath(), binDir, assets })
    );
    assert(err instanceof StationError);
    assertEquals(err.code, "embedded_nats_server_corrupt");
    await assertRejects(() => Deno.stat(extractedPath(binDir)), Deno.errors.NotFound);
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});

Deno.test("embedded nats-server: a configured one wins, one on the PATH comes next, and a missing configured one is not replaced", async () => {
  const tmp = await Deno.makeTempDir({ prefix: "stn-embedded-" });
  try {
    const assets = await stagedAssets(join(tmp, "embed"));
    const binDir = join(tmp, "bin");
    assertEquals(chooseNatsServer(INSTALLED, { binDir, assets })?.source, "configured");
    assertEquals(chooseNatsServer("nats-server", { binDir, assets }), { path: INSTALLED, source: "path" });
    const missing = "/nonexistent/nats-server";
    assertEquals(chooseNatsServer(missing, { ...noNatsOnPath(), binDir, assets }), undefined);
    const err = await assertRejects(() => locateNatsServer(missing, { ...noNatsOnPath(), binDir, assets }));
    assertEquals((err as StationError).code, "nats_server_not_found");
    // Running from the checkout there are no embedded files: today's lookup, and its error, stay.
    assertEquals(embeddedAssets(), undefined);
    assertEquals(chooseNatsServer("nats-server", { ...noNatsOnPath(), binDir }), undefined);
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});

Deno.test("embedded files: the lookup's directory is where the compile script stages them, relative to the module", () => {
  const root = new URL("../../", import.meta.url);
  const moduleUrl = new URL("src/build/embedded.ts", root).href;
  assertEquals(embedDirFrom(moduleUrl), join(new URL(".build/embed", root).pathname));
  // In a compiled binary the modules live under a virtual root; the same relative path holds there.
  assertEquals(
    embedDirFrom("file:///tmp/deno-compile-stn/src/build/embedded.ts"),
    "/tmp/deno-compile-stn/.build/embed",
  );
});

Deno.test("embedded files: a compiled stn's version, commit and build date come from its manifest", async () => {
  const tmp = await Deno.makeTempDir({ prefix: "stn-embedded-" });
  try {
    const assets = await stagedAssets(join(tmp, "embed"));
    const m = assets.manifest;
    assertEquals(await buildInfo(assets), {
      version: m.stn_version,
      commit: m.commit,
      build_date: m.built_at,
      deno: Deno.version.deno,
      build: "compiled",
    });
    assertEquals(m.commit?.length, 40);
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});
