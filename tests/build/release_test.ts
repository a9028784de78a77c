import { join } from "node:path";
import { ROOT } from "../../scripts/compile.ts";
import { VERSION } from "../../src/version.ts";
import { assertEquals, assertStringIncludes } from "../helpers/assert.ts";

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
