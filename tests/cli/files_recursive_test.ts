import { join } from "node:path";
import { assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { tempHome } from "../helpers/home.ts";
import { runStn, startServe } from "../helpers/stn.ts";

/**
 * `stn files upload DIR -r` against a running `stn serve`: a folder tree in one process, keys under a prefix,
 * symlinks skipped, each file byte-identical on download; a file the server refuses fails alone (exit 1,
 * upload_incomplete, the rest stored); misuse is a usage error.
 */

Deno.test("stn files upload -r: a folder's files under a prefix, one refused file fails alone, misuse", async () => {
  const home = await tempHome();
  const env = { ...home.env, STN_STORAGE_MAX_FILE_SIZE: "1000" };
  const work = await Deno.makeTempDir({ prefix: "stn-files-r-" });
  const serve = await startServe({ home: home.home, env });
  try {
    const dir = join(work, "reports");
    await Deno.mkdir(join(dir, "2026", "nov"), { recursive: true });
    const names: string[] = [];
    for (let i = 0; i < 25; i++) {
      const rel = i % 2 ? `2026/nov/r${i}.txt` : `r${i}.txt`;
      await Deno.writeTextFile(join(dir, rel), `report ${i}\n`);
      names.push(rel);
    }
    await Deno.symlink("/etc/passwd", join(dir, "link"));

    const up = await runStn(["files", "upload", dir, "-r", "--key-prefix", "up/", "--json"], { env });
    assertEquals(up.code, 0, up.stderr);
    const result = JSON.parse(up.stdout);
    assertEquals(result.uploaded, 25);
    assertEquals(result.failed, []);
    assertEquals(result.skipped, [join(dir, "link")]);
    assertEquals(
      result.files.map((f: { file_key: string }) => f.file_key),
      names.map((n) => `up/${n}`).sort(),
    );

    const down = await runStn(["files", "download", "up/2026/nov/r7.txt", "-o", "-"], { env });
    assertEquals([down.code, down.stdout], [0, "report 7\n"]);
    const list = await runStn(["files", "list", "--prefix", "up/", "--json"], { env });
    assertEquals(JSON.parse(list.stdout).files.length, 25);

    // The default prefix is files/<folder>/; a file over storage.max_file_size fails, the others go up.
    await Deno.writeTextFile(join(dir, "big.txt"), "x".repeat(2000));
    const partial = await runStn(["files", "upload", dir, "--recursive"], { env });
    assertEquals(partial.code, 1, partial.stderr);
    assertStringIncludes(partial.stdout, "Uploaded: 25 file(s)");
    assertStringIncludes(partial.stdout, "under files/reports/");
    assertStringIncludes(partial.stdout, `Failed:   ${join(dir, "big.txt")}`);
    assertStringIncludes(partial.stderr, "1 of 26 file(s) were not uploaded");
    const stored = await runStn(["files", "list", "--prefix", "files/reports/", "--json"], { env });
    assertEquals(JSON.parse(stored.stdout).files.length, 25);

    // Misuse: --key with -r, stdin with -r, a file given to -r, a bad --concurrency.
    for (
      const [args, code, text] of [
        [[dir, "-r", "--key", "a/b"], 2, "--key cannot be used"],
        [["-", "-r"], 2, "stdin (-) cannot be used"],
        [[join(dir, "r0.txt"), "-r"], 1, "is not a folder"],
        [[dir, "-r", "--concurrency", "0"], 2, "--concurrency 0"],
      ] as const
    ) {
      const r = await runStn(["files", "upload", ...args], { env });
      assertEquals(r.code, code, r.stderr);
      assertStringIncludes(r.stderr, text);
    }
  } finally {
    await serve.stop();
    await home.cleanup();
    await Deno.remove(work, { recursive: true });
  }
});
