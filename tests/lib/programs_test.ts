import { assertEquals } from "../helpers/assert.ts";
import { findProgram, PROGRAM_DIRS } from "../../src/lib/programs.ts";
import { explainDockerError, resolveDockerHost } from "../../src/sandbox/docker_host.ts";

Deno.test("findProgram: with cron's PATH, nats-server is still found where Debian installs it", () => {
  const apt = Deno.readTextFileSync("/var/lib/dpkg/status").includes("Package: nats-server\n");
  const found = findProgram("nats-server", { env: { PATH: "/usr/bin:/bin" } });
  // This machine (and CI) has the Debian package, which puts it in /usr/sbin; other setups have it on PATH.
  assertEquals(found, apt ? "/usr/sbin/nats-server" : findProgram("nats-server"));
  assertEquals(findProgram("nats-server", { env: { PATH: "/usr/bin:/bin" }, dirs: [] }), undefined);
  assertEquals(findProgram("/usr/bin/env"), "/usr/bin/env", "a path is taken as it is");
  assertEquals(findProgram("/nonexistent/nats-server"), undefined);
  assertEquals(findProgram("no-such-program-stn"), undefined);
});

Deno.test("scripts/lib/programs.sh searches the directories the runtime searches", () => {
  const sh = Deno.readTextFileSync(new URL("../../scripts/lib/programs.sh", import.meta.url));
  const list = /STN_PROGRAM_DIRS=\(([^)]*)\)/.exec(sh)![1];
  assertEquals(list.split(/\s+/).filter((d) => d.startsWith("/")), PROGRAM_DIRS);
});

Deno.test("resolveDockerHost: config, then DOCKER_HOST, then the first standard socket that exists", () => {
  assertEquals(resolveDockerHost("/srv/docker.sock", { DOCKER_HOST: "tcp://h:2375" }).source, "config");
  assertEquals(resolveDockerHost(undefined, { DOCKER_HOST: "tcp://h:2375" }), {
    host: "tcp://h:2375",
    source: "DOCKER_HOST",
  });
  const dir = Deno.makeTempDirSync();
  try {
    // A rootless Docker's socket under XDG_RUNTIME_DIR, when the system socket is absent, is used.
    const listener = Deno.listen({ transport: "unix", path: `${dir}/docker.sock` });
    const standard = resolveDockerHost(undefined, { XDG_RUNTIME_DIR: dir, HOME: dir });
    listener.close();
    const system = ["/var/run/docker.sock", "/run/docker.sock"].find((p) => {
      try {
        return Deno.statSync(p).isSocket;
      } catch {
        return false;
      }
    });
    assertEquals(standard, { host: system ?? `${dir}/docker.sock`, source: "standard location" });
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("explainDockerError: permission names the docker group; anything else says start it", () => {
  const denied = Object.assign(new Error("connect EACCES /var/run/docker.sock"), { code: "EACCES" });
  const p = explainDockerError(denied, "/var/run/docker.sock");
  assertEquals(p.kind, "permission");
  assertEquals(p.hint.includes("docker group") && p.hint.includes("sandbox.enabled: false"), true);
  const down = explainDockerError(Object.assign(new Error("connect ENOENT"), { code: "ENOENT" }), "/x.sock");
  assertEquals(down.kind, "down");
  assertEquals(down.message.includes("/x.sock is not reachable"), true);
});
