import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { assert, assertEquals } from "../helpers/assert.ts";
import { startBrowser } from "../helpers/browser.ts";
import { startTestStation } from "../helpers/station.ts";
import { SANDBOX_CONFIG } from "../sandbox/backend.ts";
import { migrateText } from "../../src/workflows/migrate/migrate.ts";

// Every example workflow's state graph (and the converted Station examples') on its dashboard page in a
// real Chromium, measured from the DOM: no two state boxes overlap, no edge label covers a box, another
// label or a group's title, a group holds exactly its own states, and no edge passes through a group's
// title or a state it does not start or end at. Screenshots go to .cache/test-artifacts/graphs.

const root = (p: string) => fileURLToPath(new URL(`../../${p}`, import.meta.url));
const files = (dir: string) =>
  [...Deno.readDirSync(root(dir))].filter((e) => /\.workflow\.(ya?ml|json)$/.test(e.name))
    .map((e) => join(root(dir), e.name)).sort();

/** Runs in the page: every overlap the graph should not have, as sentences (empty when the graph is clean). */
const OVERLAPS = `(() => {
  const box = (el) => { const b = el.getBBox(); return { x: b.x, y: b.y, r: b.x + b.width, b: b.y + b.height }; };
  const hit = (a, b, pad = 0) => a.x < b.r - pad && b.x < a.r - pad && a.y < b.b - pad && b.y < a.b - pad;
  const inside = (a, o) => a.x >= o.x && a.r <= o.r && a.y >= o.y && a.b <= o.b;
  const states = [...document.querySelectorAll(".graph-state")].map((g) =>
    ({ id: g.dataset.state, groups: (g.dataset.groups ?? "").split(" "), box: box(g.querySelector("rect")) }));
  const groups = [...document.querySelectorAll(".graph-group")].map((g) =>
    ({ id: g.dataset.group, box: box(g.querySelector("rect")), title: box(g.querySelector("text")) }));
  const labels = [...document.querySelectorAll(".graph-label")].map((t) => ({ id: t.textContent, box: box(t) }));
  const found = [];
  states.forEach((a, i) => states.slice(i + 1).forEach((b) => {
    if (hit(a.box, b.box)) found.push("state " + a.id + " overlaps state " + b.id);
  }));
  labels.forEach((l, i) => {
    for (const s of states) if (hit(l.box, s.box)) found.push("label " + l.id + " overlaps state " + s.id);
    for (const m of labels.slice(i + 1)) if (hit(l.box, m.box)) found.push("label " + l.id + " overlaps label " + m.id);
    for (const g of groups) if (hit(l.box, g.title)) found.push("label " + l.id + " overlaps the title of " + g.id);
  });
  for (const g of groups) {
    for (const s of states) {
      if (s.groups.includes(g.id) ? !inside(s.box, g.box) : hit(s.box, g.box)) {
        found.push("state " + s.id + (s.groups.includes(g.id) ? " sticks out of " : " overlaps ") + g.id);
      }
      if (hit(s.box, g.title)) found.push("the title of " + g.id + " overlaps state " + s.id);
    }
  }
  for (const e of document.querySelectorAll(".graph-edge")) {
    const path = e.querySelector("path"), length = path.getTotalLength();
    const crossed = [
      ...states.filter((s) => s.id !== e.dataset.from && s.id !== e.dataset.to)
        .map((s) => ({ what: "state " + s.id, box: s.box })),
      ...groups.map((g) => ({ what: "the title of " + g.id, box: g.title })),
    ];
    for (const c of crossed) {
      const core = { x: c.box.x + 1, y: c.box.y + 1, r: c.box.r - 1, b: c.box.b - 1 };
      for (let d = 0; d <= length; d += 3) {
        const p = path.getPointAtLength(d);
        if (inside({ x: p.x, y: p.y, r: p.x, b: p.y }, core)) {
          found.push("edge " + e.dataset.from + " to " + e.dataset.to + " passes through " + c.what);
          break;
        }
      }
    }
  }
  return [...new Set(found)];
})()`;

/** The example definitions: the repository's examples as they are, Station's converted by `migrateText`. */
function examples(): Array<{ file: string; text: string; type: string }> {
  const own = [...files("examples/workflows"), ...files("examples/environments/default/workflows")]
    .map((file) => ({ file, text: Deno.readTextFileSync(file) }));
  const station = files("tests/workflows/fixtures/station/ok").map((file) => {
    const migrated = migrateText(Deno.readTextFileSync(file), file);
    return { file, text: migrated.text };
  });
  return [...own, ...station].map((e) => ({
    ...e,
    type: e.file.endsWith(".json") ? "application/json" : "application/yaml",
  }));
}

Deno.test("state graphs in Chromium: every example's boxes, groups and labels are laid out without overlaps", async () => {
  const ts = await startTestStation({ configYaml: SANDBOX_CONFIG });
  const b = await startBrowser("graphs");
  try {
    const url = ts.station.url;
    const { page, errors } = await b.page();
    // A stored workflow's agent steps must name agents the station has: give it a stub of each one named.
    const byEnv = new Map<string, Set<string>>();
    for (const e of examples()) {
      for (const m of e.text.matchAll(/"?agent"?:\s*"?([\w.-]+)(?:@([\w-]+))?/g)) {
        const env = m[2] ?? "default";
        byEnv.set(env, (byEnv.get(env) ?? new Set()).add(m[1]));
      }
    }
    for (const [env, names] of byEnv) {
      const dir = ts.home.path("environments", env, "agents");
      await Deno.mkdir(dir, { recursive: true });
      for (const name of names) {
        await Deno.writeTextFile(
          join(dir, `${name}.prompt`),
          "---\nmodel: openai/gpt-4o-mini\n---\nA stub.\n",
        );
      }
      const synced = await fetch(`${url}/api/v1/sync`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ environment: env }),
      });
      assertEquals(synced.status, 200, await synced.text());
    }
    const shown: string[] = [];
    for (const e of examples()) {
      const res = await fetch(`${url}/api/v1/workflows`, {
        method: "POST",
        headers: { "content-type": e.type },
        body: e.text,
      });
      const body = await res.json();
      assertEquals(res.status, 201, `${e.file}: ${JSON.stringify(body)}`);
      const id = String(body.workflow.id);
      await page.goto(`${url}/ui/workflows/${encodeURIComponent(id)}`);
      const states = await page.locator(".graph-state").count();
      assert(states > 0, `${id}: the graph shows no states`);
      assertEquals(await page.evaluate(OVERLAPS), [], `${id} (${e.file})`);
      await page.locator("svg[role=img]").screenshot({ path: join(b.artifacts, `${id}.png`) });
      shown.push(id);
    }
    assert(shown.length >= 19, `every example was shown: ${shown.join(", ")}`);
    assertEquals(errors, []);
  } finally {
    await b.close();
    await ts.close();
  }
});
