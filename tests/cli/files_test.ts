import { assert, assertEquals, assertMatch, assertNotMatch, assertStrictEquals } from "../helpers/assert.ts";
import { join } from "node:path";
import { tempHome } from "../helpers/home.ts";
import { MAIN, runStn, startServe } from "../helpers/stn.ts";
import { checksumOf, randomBytes } from "../files/bytes.ts";

const MiB = 1024 * 1024;

/** Runs a shell pipeline with the real stn, as a user would type it. */
async function sh(
  script: string,
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command("bash", {
    args: ["-o", "pipefail", "-c", script],
    env: { ...env, STN: `${Deno.execPath()} run -A --quiet ${MAIN}` },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

Deno.test("stn files against a running server: round trips, pipes, overwrite, errors, delete", async (t) => {
  const home = await tempHome();
  const env = { ...home.env, STN_STORAGE_MAX_FILE_SIZE: String(160 * MiB) };
  const work = await Deno.makeTempDir({ prefix: "stn-files-cli-" });
  const serve = await startServe({ home: home.home, env });
  try {
    await t.step("upload and download of 0 B, 1 B, 1 MiB and 150 MiB are byte-identical", async () => {
      for (const size of [0, 1, MiB, 150 * MiB]) {
        const bytes = randomBytes(size);
        const src = join(work, `in-${size}.bin`);
        await Deno.writeFile(src, bytes);
        const up = await runStn(["files", "upload", src, "--json"], { env });
        assertStrictEquals(up.code, 0, up.stderr);
        const result = JSON.parse(up.stdout);
        assertMatch(result.file_key, /^files\/f_/);
        assertStrictEquals(result.size_bytes, size);
        assertStrictEquals(result.checksum, checksumOf(bytes));
        const dst = join(work, `out-${size}.bin`);
        const down = await runStn(["files", "download", result.file_key, "-o", dst], { env });
        assertStrictEquals(down.code, 0, down.stderr);
        assertMatch(down.stdout, /^Downloaded: /);
        const got = await Deno.readFile(dst);
        assertStrictEquals(got.length, size);
        assertStrictEquals(checksumOf(got), checksumOf(bytes));
        await Deno.remove(src);
        await Deno.remove(dst);
      }
      // No temp file is left behind.
      assertEquals([...Deno.readDirSync(work)].map((e) => e.name), []);
    });

    let pipedKey = "";
    const piped = randomBytes(2 * MiB + 17);
    await t.step("upload - from a pipe, download -o - | sha256sum", async () => {
      const src = join(work, "piped.bin");
      await Deno.writeFile(src, piped);
      const up = await sh(`cat '${src}' | $STN files upload - --key runs/r1/output/piped.bin`, env);
      assertStrictEquals(up.code, 0, up.stderr);
      assertStrictEquals(up.stdout.trim(), "Uploaded: runs/r1/output/piped.bin (2.1 MB)");
      pipedKey = "runs/r1/output/piped.bin";
      const down = await sh(`$STN files download ${pipedKey} -o - | sha256sum`, env);
      assertStrictEquals(down.code, 0, down.stderr);
      assertStrictEquals("sha256:" + down.stdout.split(" ")[0], checksumOf(piped));
    });

    await t.step(
      "download refuses to overwrite without --force; the default name comes from the upload",
      async () => {
        const src = join(work, "report.csv");
        await Deno.writeTextFile(src, "a,b\n1,2\n");
        const up = await runStn(["files", "upload", src, "--ttl", "24h", "--json"], { env });
        assertStrictEquals(up.code, 0, up.stderr);
        const { file_key, content_type, expires_at } = JSON.parse(up.stdout);
        assertStrictEquals(content_type, "text/csv");
        assert(expires_at);
        const cwd = await Deno.makeTempDir({ dir: work });
        const first = await runStn(["files", "download", file_key.slice("files/".length)], { env, cwd });
        assertStrictEquals(first.code, 0, first.stderr);
        assertStrictEquals(await Deno.readTextFile(join(cwd, "report.csv")), "a,b\n1,2\n");
        await Deno.writeTextFile(join(cwd, "report.csv"), "mine");
        const again = await runStn(["files", "download", file_key], { env, cwd });
        assertStrictEquals(again.code, 1);
        assertMatch(again.stderr, /error: .*already exists/);
        assertMatch(again.stderr, /hint: .*--force/);
        assertStrictEquals(await Deno.readTextFile(join(cwd, "report.csv")), "mine");
        const forced = await runStn(["files", "download", file_key, "--force"], { env, cwd });
        assertStrictEquals(forced.code, 0, forced.stderr);
        assertStrictEquals(await Deno.readTextFile(join(cwd, "report.csv")), "a,b\n1,2\n");
      },
    );

    await t.step("list and info show the files", async () => {
      const list = await runStn(["files", "list", "--prefix", "runs/"], { env });
      assertStrictEquals(list.code, 0, list.stderr);
      assertMatch(list.stdout, /^KEY\s+SIZE\s+TYPE\s+AGE\s+EXPIRES/);
      assertMatch(
        list.stdout,
        /runs\/r1\/output\/piped\.bin\s+2\.1 MB\s+application\/octet-stream\s+\d+s\s+never/,
      );
      const info = await runStn(["files", "info", pipedKey, "--json"], { env });
      assertStrictEquals(info.code, 0, info.stderr);
      assertStrictEquals(JSON.parse(info.stdout).checksum, checksumOf(piped));
    });

    await t.step("unknown and invalid keys fail with error: and exit 1", async () => {
      const missing = await runStn(["files", "download", "files/nope", "-o", join(work, "x")], { env });
      assertStrictEquals(missing.code, 1);
      assertMatch(missing.stderr, /^error: file not found: files\/nope/);
      assert(!(await Deno.stat(join(work, "x")).catch(() => null)));
      const invalid = await runStn(["files", "info", "../etc/passwd"], { env });
      assertStrictEquals(invalid.code, 1);
      assertMatch(invalid.stderr, /error: invalid file key/);
      assertNotMatch(invalid.stderr, /\n\s+at /);
    });

    await t.step("delete needs --force without a TTY", async () => {
      const refused = await runStn(["files", "delete", pipedKey], { env });
      assertStrictEquals(refused.code, 2);
      assertMatch(refused.stderr, /--force/);
      const deleted = await runStn(["files", "delete", pipedKey, "--force"], { env });
      assertStrictEquals(deleted.code, 0, deleted.stderr);
      assertStrictEquals(deleted.stdout.trim(), `Deleted: ${pipedKey}`);
      const gone = await runStn(["files", "info", pipedKey], { env });
      assertStrictEquals(gone.code, 1);
    });
  } finally {
    await serve.stop();
    await home.cleanup();
    await Deno.remove(work, { recursive: true });
  }
});

Deno.test("stn files in embedded mode: an oversized upload fails and leaves no trace", async () => {
  const home = await tempHome();
  const env = { ...home.env, STN_STORAGE_MAX_FILE_SIZE: "1000" };
  try {
    const src = join(home.home, "big.bin");
    await Deno.writeFile(src, randomBytes(5000));
    const up = await runStn(["files", "upload", src, "--key", "files/big.bin"], { env });
    assertStrictEquals(up.code, 1);
    assertMatch(up.stderr, /^error: file exceeds the maximum size of 1 kB/);
    assertMatch(up.stderr, /hint: .*max_file_size/);
    // Streamed from a pipe (size unknown up front): refused while streaming.
    const piped = await runStn(["files", "upload", "-", "--key", "files/big.bin"], {
      env,
      stdin: randomBytes(5000),
    });
    assertStrictEquals(piped.code, 1);
    assertMatch(piped.stderr, /error: file exceeds the maximum size/);
    const list = await runStn(["files", "list", "--json"], { env });
    assertStrictEquals(list.code, 0, list.stderr);
    assertEquals(JSON.parse(list.stdout).files, []);
    const small = await runStn(["files", "upload", "-", "--key", "files/ok.txt"], { env, stdin: "ok" });
    assertStrictEquals(small.code, 0, small.stderr);
    assertStrictEquals(small.stdout.trim(), "Uploaded: files/ok.txt (2 B)");
  } finally {
    await home.cleanup();
  }
});
