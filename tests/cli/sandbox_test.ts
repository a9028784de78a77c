import {
  assertEquals,
  assertMatch,
  assertNotMatch,
  assertNotStrictEquals,
  assertRejectsWith,
  assertStrictEquals,
} from "../helpers/assert.ts";
import { tempHome } from "../helpers/home.ts";
import { runStn, startServe } from "../helpers/stn.ts";
import { removeStationContainers, SANDBOX_CONFIG, testBackend } from "../sandbox/backend.ts";
import { BUSYBOX } from "../sandbox/images.ts";

const TRANSFORM = `import csv, sys
with open(sys.argv[1], newline="") as src, open(sys.argv[2], "w", newline="") as dst:
    rows = csv.DictReader(src)
    out = csv.writer(dst)
    out.writerow(["name", "total"])
    for row in rows:
        out.writerow([row["name"].upper(), int(row["qty"]) * int(row["price"])])
print("transformed")
`;

Deno.test("stn sandbox: stage → exec (python transforms a CSV) → publish → stn files download", async () => {
  const home = await tempHome();
  home.writeConfig(SANDBOX_CONFIG);
  const serve = await startServe({ home: home.home, env: home.env });
  const stn = (args: string[], stdin?: string) => runStn(args, { env: home.env, stdin, cwd: home.home });
  try {
    await Deno.writeTextFile(home.path("data.csv"), "name,qty,price\napple,3,2\npear,5,7\n");
    await Deno.writeTextFile(home.path("transform.py"), TRANSFORM);
    const up = await stn(["--json", "files", "upload", home.path("data.csv")]);
    assertStrictEquals(up.code, 0, up.stderr);
    const key = JSON.parse(up.stdout).file_key;

    const open = await stn(["sandbox", "open", "--runtime", "python"]);
    assertStrictEquals(open.code, 0, open.stderr);
    const id = open.stdout.trim();
    assertMatch(id, /^sbx_[0-9A-Z]{26}$/);

    const stage = await stn(["sandbox", "stage", id, key, "in/data.csv"]);
    assertStrictEquals(stage.code, 0, stage.stderr);
    const write = await stn(["sandbox", "write", id, "transform.py", "--from", home.path("transform.py")]);
    assertStrictEquals(write.code, 0, write.stderr);

    const mkdir = await stn(["sandbox", "exec", id, "-c", "mkdir out"]);
    assertStrictEquals(mkdir.code, 0, mkdir.stderr);
    const exec = await stn([
      "sandbox",
      "exec",
      id,
      "--",
      "python3",
      "transform.py",
      "in/data.csv",
      "out/result.csv",
    ]);
    assertStrictEquals(exec.stderr, "");
    assertStrictEquals(exec.stdout, "transformed\n");
    assertStrictEquals(exec.code, 0);

    const ls = await stn(["--json", "sandbox", "ls", id, "-R"]);
    assertEquals(JSON.parse(ls.stdout).entries.map((e: { path: string }) => e.path), [
      "in",
      "in/data.csv",
      "out",
      "out/result.csv",
      "transform.py",
    ]);

    const publish = await stn(["sandbox", "publish", id, "out/result.csv"]);
    assertStrictEquals(publish.code, 0, publish.stderr);
    const published = publish.stdout.trim();
    assertStrictEquals(published, `sessions/${id}/out/result.csv`);

    const download = await stn(["files", "download", published, "-o", home.path("result.csv")]);
    assertStrictEquals(download.code, 0, download.stderr);
    assertStrictEquals(
      await Deno.readTextFile(home.path("result.csv")),
      "name,total\r\nAPPLE,6\r\nPEAR,35\r\n",
    );

    // The command's own exit code is the CLI's, and bad paths are a usage error on stderr.
    const fails = await stn(["sandbox", "exec", id, "-c", "echo bad >&2; exit 5"]);
    assertStrictEquals(fails.code, 5);
    assertStrictEquals(fails.stderr, "bad\n");
    const escape = await stn(["sandbox", "read", id, "/etc/passwd"]);
    assertNotStrictEquals(escape.code, 0);
    assertMatch(escape.stderr, /^error: path "\/etc\/passwd" is not allowed/m);
    assertMatch(escape.stderr, /^hint: /m);
    // `..` reaches the server as written (URLs would collapse it into another path, answered 404 no route).
    for (const path of ["../etc/passwd", "out/../../etc/passwd", "./../x"]) {
      const dots = await stn(["sandbox", "read", id, path]);
      assertNotStrictEquals(dots.code, 0);
      assertMatch(dots.stderr, /is not allowed/, dots.stderr);
      assertNotMatch(dots.stderr, /no route|not found/i);
    }
    const inside = await stn(["sandbox", "read", id, "out/../in/./data.csv"]);
    assertStrictEquals(inside.code, 0, inside.stderr);
    assertMatch(inside.stdout, /^name,qty,price/);

    const close = await stn(["sandbox", "close", id]);
    assertStrictEquals(close.code, 0, close.stderr);
    const list = await stn(["--json", "sandbox", "list"]);
    assertEquals(JSON.parse(list.stdout).sandboxes, []);
  } finally {
    await serve.stop();
    await removeStationContainers(home.path("stn.db"));
    await home.cleanup();
  }
});

Deno.test("stn sandbox: a live session survives kill -9 of stn serve; unknown managed containers are removed", async () => {
  const home = await tempHome();
  home.writeConfig(SANDBOX_CONFIG);
  const stn = (args: string[], stdin?: string) => runStn(args, { env: home.env, stdin });
  const backend = testBackend();
  let serve = await startServe({ home: home.home, env: home.env });
  let stray: string | undefined;
  try {
    const id = (await stn(["sandbox", "open"])).stdout.trim();
    const write = await stn(["sandbox", "write", id, "state.txt"], "kept across restarts\n");
    assertStrictEquals(write.code, 0, write.stderr);
    const [session] = await backend.listManaged({ "dev.stn.session": id });
    const stationId = session.labels["dev.stn.station"];

    await serve.stop("SIGKILL");
    // A container of this station the ledger knows nothing of (as left by a crash mid-open).
    const foreign = await backend.docker.createContainer({
      Image: BUSYBOX,
      Cmd: ["sleep", "1000"],
      Labels: { "dev.stn.managed": "true", "dev.stn.station": stationId, "dev.stn.session": "sbx_unknown" },
      HostConfig: { NetworkMode: "none" },
    });
    stray = foreign.id;

    serve = await startServe({ home: home.home, env: home.env });
    const exec = await stn(["sandbox", "exec", id, "--", "cat", "state.txt"]);
    assertStrictEquals(exec.code, 0, exec.stderr);
    assertStrictEquals(exec.stdout, "kept across restarts\n");
    const managed = await backend.listManaged({ "dev.stn.station": stationId });
    assertEquals(managed.map((c) => c.labels["dev.stn.session"]), [id]);
    await assertRejectsWith(
      backend.docker.getContainer(stray).inspect(),
      (e: { statusCode?: number }) => e.statusCode === 404,
    );
  } finally {
    await serve.stop();
    if (stray) await backend.destroy(stray);
    await removeStationContainers(home.path("stn.db"));
    await home.cleanup();
  }
});
