import { join } from "node:path";
import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { tempHome } from "../helpers/home.ts";
import { startTestStation } from "../helpers/station.ts";
import { runStn } from "../helpers/stn.ts";

const json = { "content-type": "application/json" };
const yaml = { "content-type": "application/yaml" };
const nested = (levels: number) => '{"a":'.repeat(levels) + "1" + "}".repeat(levels);
const ALIAS_BOMB = [
  'a: &a ["x","x","x","x","x","x","x","x","x"]',
  "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]",
  "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]",
  "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]",
  "e: [*d,*d,*d,*d,*d,*d,*d,*d,*d]",
  "id: bomb",
  "states: [{id: s, type: inject, data: {x: 1}}]",
].join("\n");

async function errorOf(res: Response): Promise<[number, string]> {
  const body = await res.json();
  return [res.status, body.error?.code];
}

Deno.test("input limits: deep nesting, YAML aliases and huge ttls are 4xx with a code, not 500", async (t) => {
  const ts = await startTestStation();
  const url = ts.station.url;
  const post = (path: string, headers: Record<string, string>, body: string) =>
    fetch(url + path, { method: "POST", headers, body });
  try {
    await t.step("input nested 10k and 100k levels deep: 400 too_deep", async () => {
      const definition = { id: "deep", states: [{ id: "a", type: "inject", data: { x: 1 } }] };
      for (const levels of [10_000, 100_000]) {
        const body = `{"definition":${JSON.stringify(definition)},"input":${nested(levels)}}`;
        assertEquals(await errorOf(await post("/api/v1/workflow-runs", json, body)), [400, "too_deep"]);
      }
      const shallow = `{"definition":${JSON.stringify(definition)},"input":${nested(200)}}`;
      const ok = await post("/api/v1/workflow-runs", json, shallow);
      assertEquals(ok.status, 201, "200 levels are still fine");
      await ok.body?.cancel();
    });

    await t.step("a definition nested 10k levels (JSON or YAML) is refused, not a crash", async () => {
      const body = `{"id":"x","states":[{"id":"a","type":"inject","data":${nested(10_000)}}]}`;
      assertEquals(await errorOf(await post("/api/v1/workflows/validate", json, body)), [400, "too_deep"]);
      assertEquals(await errorOf(await post("/api/v1/workflows", json, body)), [400, "too_deep"]);
      const deepYaml = `id: x\nstates:\n  - id: a\n    type: inject\n    data: ${"[".repeat(300)}1${
        "]".repeat(300)
      }\n`;
      const res = await post("/api/v1/workflows/validate", yaml, deepYaml);
      assertEquals(res.status, 200);
      const result = await res.json();
      assertEquals([result.valid, result.errors[0].code], [false, "too_deep"]);
    });

    await t.step("an unresolved alias is a parse_error; an alias bomb is too_many_aliases", async () => {
      const alias = await (await post("/api/v1/workflows/validate", yaml, "id: x\nstates: *a")).json();
      assertEquals([alias.valid, alias.errors[0].code], [false, "parse_error"]);
      assertStringIncludes(alias.errors[0].message, "Unresolved alias");
      const create = await post("/api/v1/workflows", yaml, "id: x\nstates: *a");
      assertEquals(await errorOf(create), [422, "workflow_invalid"]);

      const bomb = await (await post("/api/v1/workflows/validate", yaml, ALIAS_BOMB)).json();
      assertEquals([bomb.valid, bomb.errors[0].code], [false, "too_many_aliases"]);
      assertEquals(await errorOf(await post("/api/v1/workflows", yaml, ALIAS_BOMB)), [
        422,
        "workflow_invalid",
      ]);
    });

    await t.step("PUT ?ttl=99999999999d is 400 invalid_request", async () => {
      const res = await fetch(`${url}/api/v1/files/files/a?ttl=99999999999d`, { method: "PUT", body: "x" });
      assertEquals(await errorOf(res), [400, "invalid_request"]);
      assertEquals((await ts.station.ctx.files.list()).files.length, 0, "nothing was stored");
    });
  } finally {
    await ts.close();
  }
});

Deno.test("input limits: `stn workflow validate` calls an unresolved alias parse_error, a bomb too_many_aliases", async () => {
  const home = await tempHome();
  try {
    const alias = join(home.home, "alias.workflow.yaml");
    await Deno.writeTextFile(alias, "id: x\nstates: *a\n");
    const bomb = join(home.home, "bomb.workflow.yaml");
    await Deno.writeTextFile(bomb, ALIAS_BOMB);
    const r = await runStn(["--json", "workflow", "validate", alias, bomb], { env: home.env });
    assertEquals(r.code, 1, r.stderr);
    // Invalid files are an error under --json, with the report in its details (docs/cli.md).
    const results = JSON.parse(r.stdout).error.details.files;
    assertEquals(results.map((x: { errors: { code: string }[] }) => x.errors[0].code), [
      "parse_error",
      "too_many_aliases",
    ]);
    assert(!r.stdout.includes("file_unreadable"));
  } finally {
    await home.cleanup();
  }
});
