import {
  assert,
  assertEquals,
  assertNotEquals,
  assertStringIncludes,
  assertThrows,
} from "../helpers/assert.ts";
import { containerOptions, type StationSpec } from "../../src/deploy/container.ts";
import { lockedPackages, stationImage } from "../../src/deploy/image.ts";
import { dockerClient } from "../../src/sandbox/docker.ts";
import { SPEC_LABEL, stationNames } from "../../src/deploy/names.ts";
import { envValues } from "../../src/deploy/up.ts";
import { StationError } from "../../src/errors.ts";

const spec: StationSpec = {
  names: stationNames("demo", "/srv/work"),
  image: "stn:0.1.0-abc",
  workspace: "/srv/work",
  bind: "127.0.0.1",
  ports: { api: 9000, mcp: 9001, agent: 9002 },
  socket: "/var/run/docker.sock",
  socketGid: 998,
  token: "t".repeat(64),
  env: {},
};

Deno.test("up: a station's names come from --name or the workspace folder, as Docker allows them", () => {
  assertEquals(stationNames(undefined, "/home/ann/My Project"), {
    name: "my-project",
    container: "stn-my-project",
    volume: "stn-my-project-data",
  });
  const bad = assertThrows(() => stationNames("Bad Name", "/x"), StationError) as StationError;
  assertEquals([bad.code, bad.exitCode], ["invalid_usage", 2]);
});

Deno.test("up: --env takes NAME=value, or NAME from this environment; an unset NAME is a usage error", () => {
  assertEquals(envValues(["A=1=2", "KEY"], { KEY: "secret" }), { A: "1=2", KEY: "secret" });
  const unset = assertThrows(() => envValues(["OPENAI_API_KEY"], {}), StationError) as StationError;
  assertEquals([unset.code, unset.exitCode], ["invalid_env", 2]);
  assertThrows(() => envValues(["1BAD=x"], {}), StationError);
});

Deno.test("up: the container spec publishes on the bind address only, mounts the workspace read-only, and its hash follows every setting", () => {
  const options = containerOptions(spec);
  const host = options.HostConfig!;
  assertEquals(Object.values(host.PortBindings).flat(), [
    { HostIp: "127.0.0.1", HostPort: "9000" },
    { HostIp: "127.0.0.1", HostPort: "9001" },
    { HostIp: "127.0.0.1", HostPort: "9002" },
  ]);
  assertEquals(host.Binds, ["/srv/work:/workspace:ro", "/var/run/docker.sock:/var/run/docker.sock"]);
  assertEquals([host.Privileged, host.CapDrop, host.GroupAdd], [false, ["ALL"], ["998"]]);
  assertEquals(
    containerOptions(spec).Labels![SPEC_LABEL],
    options.Labels![SPEC_LABEL],
    "same spec, same hash",
  );
  assertNotEquals(
    containerOptions({ ...spec, ports: { ...spec.ports, api: 9100 } }).Labels![SPEC_LABEL],
    options.Labels![SPEC_LABEL],
  );
  assertNotEquals(
    containerOptions({ ...spec, image: "stn:0.1.0-def" }).Labels![SPEC_LABEL],
    options.Labels![SPEC_LABEL],
  );
  // --env cannot take the token away or move the station off its ports.
  const env = containerOptions({
    ...spec,
    env: { STN_SERVER_API_TOKEN: "x".repeat(20), STN_SERVER_PORT: "1" },
  }).Env!;
  assert(
    env.includes(`STN_SERVER_API_TOKEN=${spec.token}`) && env.includes("STN_SERVER_PORT=8585"),
    String(env),
  );
  assert(env.includes('STN_SANDBOX_LABELS={"dev.stn.up":"demo"}'));
});

Deno.test("up: the image carries every npm package deno.lock pins, by name", () => {
  const lock = JSON.parse(Deno.readTextFileSync(new URL("../../deno.lock", import.meta.url)));
  const names = lockedPackages(lock);
  for (const p of ["hono", "@nats-io/jetstream", "zod", "dockerode"]) assert(names.includes(p), p);
  assert(names.every((n) => !/@\d/.test(n.slice(1))), "names without versions");
  assertEquals(lockedPackages({ npm: { "@a/b@1.0.0_zod@4.0.0": {}, "c@2.0.0": {}, "c@3.0.0": {} } }), [
    "@a/b",
    "c",
  ]);
});

Deno.test("up: a build that cannot find stn's npm packages fails before Docker is asked, saying what to run", async () => {
  const empty = await Deno.makeTempDir({ prefix: "stn-empty-deno-dir-" });
  const before = Deno.env.get("DENO_DIR");
  Deno.env.set("DENO_DIR", empty); // `deno info` (run by the builder) then reports an empty npm cache
  try {
    const err = await stationImage(dockerClient()).then(() => null, (e) => e);
    assert(err instanceof StationError, String(err));
    assertEquals(err.code, "image_build_failed");
    assertStringIncludes(err.message, "the Deno cache lacks npm packages stn needs");
    assertStringIncludes(err.hint ?? "", "deno install");
  } finally {
    if (before === undefined) Deno.env.delete("DENO_DIR");
    else Deno.env.set("DENO_DIR", before);
    await removeTree(empty);
  }
});

/** Removes a directory tree, again if a file lands in it meanwhile (seen once on a loaded machine). */
async function removeTree(dir: string): Promise<void> {
  for (let i = 0;; i++) {
    try {
      return await Deno.remove(dir, { recursive: true });
    } catch (err) {
      if (i === 4) throw err;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}
