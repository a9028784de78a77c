import {
  assert,
  assertEquals,
  assertMatch,
  assertRejectsWith,
  assertStrictEquals,
} from "../helpers/assert.ts";
import { Buffer } from "node:buffer";
import { Readable } from "node:stream";
import type { StationError } from "../../src/errors.ts";
import { sleep } from "../../src/lib/async.ts";
import { readAll, testBackend, testInBothModes, testLabels } from "./backend.ts";
import { BUSYBOX, PYTHON } from "./images.ts";

const EXEC = { timeoutMs: 30_000, maxOutputBytes: 1024 * 1024 };

testInBothModes(
  "docker backend: container has the security defaults, limits, labels, a read-only root and no host mounts",
  async (mode) => {
    const backend = testBackend(mode);
    const labels = testLabels("inspect");
    const id = await backend.create({ image: BUSYBOX, network: false, labels });
    try {
      const info = await backend.docker.getContainer(id).inspect();
      // One mount from the engine: the supervisor's anonymous volume; nothing from the host.
      assertEquals(info.Mounts.map((m) => [m.Type, m.Destination, m.Driver]), [[
        "volume",
        "/.stn",
        "local",
      ]]);
      assertStrictEquals(info.HostConfig.Binds, null);
      // Writes go only to /workspace and /tmp, size-capped tmpfs (sandbox.disk_mb, sandbox.tmp_mb).
      assertStrictEquals(info.HostConfig.ReadonlyRootfs, true);
      assertEquals(Object.keys(info.HostConfig.Tmpfs ?? {}).sort(), ["/tmp", "/workspace"]);
      assertMatch(info.HostConfig.Tmpfs!["/workspace"], /^size=1024m,/);
      assertMatch(info.HostConfig.Tmpfs!["/tmp"], /^size=256m,/);
      assertStrictEquals(info.HostConfig.LogConfig?.Type, "none");
      assertStrictEquals(info.HostConfig.NetworkMode, "none");
      assertStrictEquals(info.Config.User, "1000:1000");
      assertEquals(info.HostConfig.CapDrop, ["ALL"]);
      assertEquals(info.HostConfig.SecurityOpt, ["no-new-privileges"]);
      assertStrictEquals(info.HostConfig.Privileged, false);
      assertStrictEquals(info.HostConfig.PidsLimit, 256);
      // memory_mb for the processes, plus what /workspace, /tmp and /dev/shm (64 MiB) may hold in RAM.
      assertStrictEquals(info.HostConfig.Memory, (2048 + 1024 + 256 + 64) * 1024 ** 2);
      assertStrictEquals(info.HostConfig.NanoCpus, 2e9);
      assertStrictEquals(info.Config.Labels["dev.stn.managed"], "true");
      assertStrictEquals(info.Config.Labels["dev.stn.session"], labels["dev.stn.session"]);
      // Commands run as the non-root user, who owns /workspace.
      const who = await backend.exec(id, { ...EXEC, cmd: "id -u; stat -c '%u:%g' /workspace; pwd" });
      assertStrictEquals(who.stdout, "1000\n1000:1000\n/workspace\n");
      const net = await backend.exec(id, { ...EXEC, cmd: "ls /sys/class/net" });
      assertStrictEquals(net.stdout.trim(), "lo");
    } finally {
      await backend.destroy(id);
    }
  },
);

testInBothModes("docker backend: write, read, list and delete through the engine API", async (mode) => {
  const backend = testBackend(mode);
  const id = await backend.create({ image: BUSYBOX, network: false, labels: testLabels("files") });
  try {
    await backend.writeFile(id, "a/b/hello.txt", { data: new TextEncoder().encode("hello world"), size: 11 });
    const cat = await backend.exec(id, { ...EXEC, cmd: ["cat", "/workspace/a/b/hello.txt"] });
    assertStrictEquals(cat.stdout, "hello world");
    const owner = await backend.exec(id, { ...EXEC, cmd: "stat -c '%u %a' a a/b a/b/hello.txt" });
    assertStrictEquals(owner.stdout, "1000 755\n1000 755\n1000 644\n");

    const read = await backend.readFile(id, "/workspace/a/b/hello.txt", 1024);
    assertStrictEquals(read.size, 11);
    assertStrictEquals((await readAll(read.stream)).toString(), "hello world");

    // A streamed write of 3 MiB comes back byte for byte.
    const big = Buffer.alloc(3 * 1024 * 1024);
    for (let i = 0; i < big.length; i++) big[i] = (i * 7) % 251;
    await backend.writeFile(id, "big.bin", {
      data: Readable.from([big.subarray(0, 1000), big.subarray(1000)]),
      size: big.length,
    });
    const back = await backend.readFile(id, "big.bin", big.length);
    assert((await readAll(back.stream)).equals(big));

    await assertRejectsWith(
      backend.readFile(id, "big.bin", 1024),
      (e: StationError) => e.code === "file_too_large",
    );
    await assertRejectsWith(
      backend.readFile(id, "missing.txt", 1024),
      (e: StationError) => e.code === "file_not_found",
    );
    await assertRejectsWith(
      backend.readFile(id, "a", 1024),
      (e: StationError) => e.code === "is_a_directory",
    );

    const top = await backend.list(id, ".", false);
    assertEquals(top.map((e) => [e.path, e.type]), [["a", "dir"], ["big.bin", "file"]]);
    const all = await backend.list(id, "/workspace", true);
    assertEquals(all.map((e) => e.path), ["a", "a/b", "a/b/hello.txt", "big.bin"]);
    assertStrictEquals(all.find((e) => e.path === "a/b/hello.txt")?.size, 11);
    assertStrictEquals(all.find((e) => e.path === "a/b/hello.txt")?.mode, "644");

    await assertRejectsWith(backend.delete(id, "a", false), (e: StationError) => e.code === "is_a_directory");
    await backend.delete(id, "a", true);
    await backend.delete(id, "big.bin", false);
    assertEquals(await backend.list(id, ".", true), []);
    await assertRejectsWith(backend.delete(id, "a", true), (e: StationError) => e.code === "file_not_found");
  } finally {
    await backend.destroy(id);
  }
});

testInBothModes("docker backend: every path-escape attempt is rejected, none remapped", async (mode) => {
  const backend = testBackend(mode);
  const id = await backend.create({ image: BUSYBOX, network: false, labels: testLabels("escape") });
  const attempts = [
    "/etc/passwd",
    "../etc/passwd",
    "a/../../etc/passwd",
    "/workspace/../etc/shadow",
    "/workspace/..",
    "..",
    "/",
    "/workspacex/file",
    "/tmp/x",
    "",
    "nul\0byte",
  ];
  try {
    const one = new TextEncoder().encode("x");
    for (const path of attempts) {
      const ops: [string, () => Promise<unknown>][] = [
        ["write", () => backend.writeFile(id, path, { data: one, size: 1 })],
        ["read", () => backend.readFile(id, path, 1024)],
        ["list", () => backend.list(id, path, false)],
        ["delete", () => backend.delete(id, path, true)],
        ["exec cwd", () => backend.exec(id, { ...EXEC, cmd: ["true"], cwd: path })],
      ];
      for (const [op, run] of ops) {
        await assertRejectsWith(run(), (e: StationError) => {
          assertStrictEquals(e.code, "path_outside_workspace", `${op} ${JSON.stringify(path)}: ${e.message}`);
          return true;
        });
      }
    }
    // Nothing was written anywhere: /etc/passwd is the image's, /workspace is empty.
    const passwd = await backend.exec(id, {
      ...EXEC,
      cmd: "cat /etc/passwd /tmp/x 2>/dev/null; ls -A /workspace",
    });
    assert(!passwd.stdout.split("\n").includes("x"));
    assertEquals(await backend.list(id, ".", true), []);
    // Symlinks planted by the sandbox user: reading through one cannot reach a file only root may
    // read (the engine reads as root), and writing through one replaces the link with a directory.
    const root = await backend.docker.getContainer(id).exec({
      Cmd: ["sh", "-c", "echo secret > /secret; chmod 600 /secret; mkdir /rootdir"],
      User: "0",
    });
    await new Promise((resolve) => root.start({}, (_e, stream) => stream?.on("end", resolve).resume()));
    await backend.exec(id, { ...EXEC, cmd: "ln -s / up; ln -s /secret s; ln -s /rootdir rd" });
    await assertRejectsWith(backend.readFile(id, "up/secret", 1024), (e: StationError) => {
      assertStrictEquals(e.code, "path_outside_workspace");
      assertMatch(e.message, /is a symlink \(to \/\)/);
      return true;
    });
    await assertRejectsWith(backend.readFile(id, "s", 1024), (e: StationError) => e.code === "not_a_file");
    await backend.writeFile(id, "rd/x.txt", { data: one, size: 1 });
    const after = await backend.exec(id, { ...EXEC, cmd: "ls -A /rootdir; stat -c %F /workspace/rd" });
    assertStrictEquals(after.stdout, "directory\n");
    await backend.delete(id, "up", false);
    await backend.delete(id, "s", false);
    await backend.delete(id, "rd", true);

    // Inside-the-workspace `..` that stays inside is fine.
    await backend.writeFile(id, "a/../inside.txt", { data: one, size: 1 });
    assertEquals((await backend.list(id, ".", false)).map((e) => e.path), ["inside.txt"]);
  } finally {
    await backend.destroy(id);
  }
});

testInBothModes("docker backend: exec argv/shell, cwd, env, exit codes and output caps", async (mode) => {
  const backend = testBackend(mode);
  const id = await backend.create({ image: BUSYBOX, network: false, labels: testLabels("exec") });
  try {
    await backend.writeFile(id, "sub/f.txt", { data: new TextEncoder().encode("x"), size: 1 });
    const argv = await backend.exec(id, {
      ...EXEC,
      cmd: ["sh", "-c", 'echo "$GREETING $(pwd)"; echo oops >&2; exit 7'],
      cwd: "sub",
      env: { GREETING: "hi" },
    });
    assertStrictEquals(argv.exit_code, 7);
    assertStrictEquals(argv.stdout, "hi /workspace/sub\n");
    assertStrictEquals(argv.stderr, "oops\n");
    assertStrictEquals(argv.truncated, false);
    const shell = await backend.exec(id, { ...EXEC, cmd: "ls | wc -l" });
    assertStrictEquals(shell.stdout.trim(), "1");

    const streamed: string[] = [];
    const big = await backend.exec(id, {
      ...EXEC,
      maxOutputBytes: 1000,
      cmd: "head -c 5000 /dev/zero | tr '\\0' a; echo done >&2",
      onOutput: (stream, chunk) => streamed.push(stream + ":" + chunk.length),
    });
    assertStrictEquals(big.exit_code, 0);
    assertStrictEquals(big.stdout.length, 1000);
    assertStrictEquals(big.stdout_truncated, true);
    assertStrictEquals(big.truncated, true);
    assertStrictEquals(big.stderr, "done\n");
    assertStrictEquals(big.stderr_truncated, false);
    assert(streamed.length > 0);
  } finally {
    await backend.destroy(id);
  }
});

testInBothModes("docker backend: timeout and cancel kill the command inside the container", async (mode) => {
  const backend = testBackend(mode);
  const id = await backend.create({ image: BUSYBOX, network: false, labels: testLabels("kill") });
  const running = async (marker: string) => {
    const ps = await backend.exec(id, { ...EXEC, cmd: "ps -o args" });
    return ps.stdout.split("\n").filter((l) => l.includes(marker) && !l.includes("ps -o")).length;
  };
  try {
    const timed = await backend.exec(id, {
      ...EXEC,
      timeoutMs: 500,
      cmd: "sleep 301 & sleep 302; echo never",
    });
    assertStrictEquals(timed.timed_out, true);
    assertStrictEquals(timed.exit_code, 124);
    assertStrictEquals(timed.stdout, "");
    assertStrictEquals(await running("sleep 30"), 0);

    const controller = new AbortController();
    const started = backend.exec(id, {
      ...EXEC,
      cmd: ["sh", "-c", "sleep 303 & sleep 304; true"],
      signal: controller.signal,
    });
    await sleep(300);
    assertStrictEquals(await running("sleep 30"), 3); // sh, and both sleeps
    controller.abort();
    await assertRejectsWith(started, (e: StationError) => e.code === "exec_canceled");
    assertStrictEquals(await running("sleep 30"), 0);
    // The orphans of the killed shells were reaped by PID 1: no zombies pile up against the pids limit.
    await sleep(200);
    const zombies = await backend.exec(id, {
      ...EXEC,
      cmd: "cat /proc/[0-9]*/stat | cut -d' ' -f3 | grep -c Z",
    });
    assertStrictEquals(zombies.stdout.trim(), "0");
  } finally {
    await backend.destroy(id);
  }
});

testInBothModes(
  "docker backend: a python image runs scripts written through the archive API",
  async (mode) => {
    const backend = testBackend(mode);
    const id = await backend.create({ image: PYTHON, network: false, labels: testLabels("python") });
    try {
      const code = "import sys\nprint(sum(int(a) for a in sys.argv[1:]))\n";
      await backend.writeFile(id, "main.py", { data: new TextEncoder().encode(code), size: code.length });
      const res = await backend.exec(id, { ...EXEC, cmd: ["python3", "main.py", "2", "40"] });
      assertStrictEquals(res.stdout, "42\n");
    } finally {
      await backend.destroy(id);
    }
  },
);

Deno.test("docker backend: a missing image that cannot be pulled names the image and how to provide one", async () => {
  const backend = testBackend();
  await assertRejectsWith(backend.ensureImage("stn-test/does-not-exist:1"), (e: StationError) => {
    assertStrictEquals(e.code, "image_unavailable");
    assertMatch(e.message, /stn-test\/does-not-exist:1/);
    assertMatch(e.hint ?? "", /sandbox\.images/);
    return true;
  });
  await backend.ensureImage(BUSYBOX);
});
