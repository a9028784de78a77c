import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { isMap, isPair, isScalar, isSeq, LineCounter, type Node, parseDocument } from "yaml";
import { loadWorkflowFile } from "../../../src/workflows/definition/load.ts";
import { assert, assertEquals, assertStringIncludes } from "../../helpers/assert.ts";
import { tempHome } from "../../helpers/home.ts";
import { runStn } from "../../helpers/stn.ts";

const ORIGINALS = fileURLToPath(new URL("../fixtures/station/originals/", import.meta.url));

/** The value at a path of segments in plain data. */
function at(data: unknown, path: Array<string | number>): unknown {
  let v = data;
  for (const k of path) v = v && typeof v === "object" ? (v as Record<string, unknown>)[k] : undefined;
  return v;
}

/**
 * Lines of a YAML file migrate had no reason to touch: every comment-only line, and the line of each
 * `key: value` whose key and value (a scalar or flow collection) are unchanged at the same place in `after`.
 */
function untouchedLines(text: string, after: unknown): string[] {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines });
  const all = text.split("\n");
  const out = all.filter((l) => /^\s*#/.test(l));
  const visit = (n: unknown, path: Array<string | number>): void => {
    if (isMap(n)) {
      for (const p of n.items) {
        if (!isPair(p) || !isScalar(p.key)) continue;
        const key = String(p.key.value);
        const v = p.value as Node | null;
        const leaf = isScalar(v) || ((isMap(v) || isSeq(v)) && v.flow);
        if (leaf && !String(v?.toString()).includes("\n")) {
          const same = JSON.stringify(at(after, [...path, key])) === JSON.stringify(v!.toJSON());
          if (same) out.push(all[lines.linePos(p.key.range![0]).line - 1]);
        } else visit(v, [...path, key]);
      }
    } else if (isSeq(n)) n.items.forEach((x, i) => visit(x, [...path, i]));
  };
  visit(doc.contents, []);
  return out;
}

Deno.test("stn workflow migrate: all 22 of Station's original workflows convert, validate, stay put on --check, and keep untouched lines byte for byte", async () => {
  const home = await tempHome();
  const out = home.path("converted");
  try {
    const names = [...Deno.readDirSync(ORIGINALS)].map((e) => e.name).filter((n) => n.includes(".workflow."))
      .sort();
    assertEquals(names.length, 22);
    const r = await runStn(["workflow", "migrate", ORIGINALS, "-o", out], { env: home.env });
    assertEquals(r.code, 0, r.stderr);
    assertStringIncludes(r.stderr, "22 file(s): 21 changed");
    assertStringIncludes(r.stderr, "0 not convertible");

    for (const name of names) {
      // Validated as files: agent references are checked against no environment (Station's agents are
      // not shipped); the structure, types, transitions and expressions are.
      const loaded = await loadWorkflowFile(join(out, name));
      assert(loaded.valid, `${name}: ${JSON.stringify(loaded.errors)}`);
      if (name.endsWith(".json")) continue; // API bodies are unwrapped: the JSON is written anew
      const before = Deno.readTextFileSync(join(ORIGINALS, name));
      const after = Deno.readTextFileSync(join(out, name));
      const written = new Set(after.split("\n"));
      const data = parseDocument(after).toJS();
      const kept = untouchedLines(before, data);
      assert(kept.length > 5, `${name}: ${kept.length} untouched lines found`);
      for (const line of kept) {
        assert(written.has(line), `${name}: untouched line changed: ${JSON.stringify(line)}`);
      }
    }

    // The flow list and the aligned comments Station wrote stay as written.
    const harness = Deno.readTextFileSync(join(out, "harness-pipeline.workflow.yaml"));
    const flow = Deno.readTextFileSync(join(ORIGINALS, "harness-pipeline.workflow.yaml")).split("\n").find((
      l,
    ) => l.includes("[quick"))!;
    assertStringIncludes(harness, flow);
    assertStringIncludes(
      Deno.readTextFileSync(join(out, "dataflow-dataflow-foreach.workflow.yaml")),
      'itemName: "service"       # Variable name for current item',
    );

    const again = await runStn(["workflow", "migrate", out, "--check"], { env: home.env });
    assertEquals(again.code, 0, again.stderr);
    assertStringIncludes(
      again.stderr,
      "22 file(s): 0 would change, 0 construct(s) converted, 0 not convertible",
    );
  } finally {
    await home.cleanup();
  }
});

Deno.test("stn workflow migrate: Station's ignored fields become what their authors meant, each with a note", async () => {
  const home = await tempHome();
  try {
    const convert = async (name: string) => {
      const target = home.path(name);
      const r = await runStn(["workflow", "migrate", join(ORIGINALS, name), "-o", target], { env: home.env });
      assertEquals(r.code, 0, r.stderr);
      const loaded = await loadWorkflowFile(target);
      assert(loaded.valid, `${name}: ${JSON.stringify(loaded.errors)}`);
      return {
        notes: r.stderr,
        states: loaded.definition!.states as unknown as Array<Record<string, unknown>>,
      };
    };
    const byId = (states: Array<Record<string, unknown>>, id: string) => states.find((s) => s.id === id)!;

    const slack = await convert("blueprints-slack-approval-escalation.workflow.yaml");
    assertEquals(
      byId(slack.states, "analyze_ip").task,
      "Analyze the following IP address for malicious activity: ${ip}. Determine if it should be blocked.",
    );
    assertStringIncludes(String(byId(slack.states, "request_approval").message), "A high-risk IP (${ip})");
    assertStringIncludes(slack.notes, ":13:5: note: `prompt` → `task`");

    const parallel = await convert("dataflow-dataflow-parallel.workflow.yaml");
    const branches = byId(parallel.states, "gather_diagnostics").branches as Array<
      Record<string, unknown>
    >;
    assertEquals(
      branches.map((b) => (b.states as Array<Record<string, unknown>>).map((s) => [s.id, s.type, s.agent])),
      [
        [["kubernetes", "agent", "k8s-investigator"]],
        [["aws_logs", "agent", "aws-log-analyzer"]],
        [["grafana", "agent", "grafana-analyst"]],
      ],
    );
    assertStringIncludes(parallel.notes, "it has no `task`: add one");

    const foreach = await convert("dataflow-dataflow-foreach.workflow.yaml");
    const loop = byId(foreach.states, "check_services");
    assertEquals(loop.itemName, "service");
    assertEquals((loop.iterator as { states: unknown[] }).states[0], {
      id: "check_services_item",
      type: "agent",
      agent: "k8s-deployment-checker",
      input: { variables: { service: "${service}" } },
    });

    const health = await convert("daily-health-check.workflow.yaml");
    const noop = byId(health.states, "alert_degraded");
    assertEquals([noop.type, noop.resultPath], ["inject", "alert_degraded"]);
    assertEquals(noop.data, { agent: "notifier", task: "Send warning: Service degraded" });
    assertStringIncludes(health.notes, "to run agent `notifier` as was probably meant, write `type: agent`");

    const incident = await convert("devops-examples-01-production-incident-response.workflow.json");
    const approval = byId(incident.states, "critical_response");
    assertEquals([approval.type, approval.timeout], ["human_approval", "300s"]);
    assertEquals(byId(incident.states, "attempt_remediation").type, "try");

    const transform = await convert("dataflow-dataflow-transform.workflow.yaml");
    assertStringIncludes(String(byId(transform.states, "extract_critical").expression), "$pySlice(");
  } finally {
    await home.cleanup();
  }
});
