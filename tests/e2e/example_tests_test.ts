import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { XMLParser, XMLValidator } from "fast-xml-parser";
import { assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { tempHome } from "../helpers/home.ts";
import { runStn } from "../helpers/stn.ts";

const EXAMPLE = fileURLToPath(new URL("../../examples/environments/default", import.meta.url));

Deno.test("the example environment's test suite passes offline (no model server, no key) and writes valid JUnit XML", async () => {
  const home = await tempHome();
  try {
    await Deno.mkdir(home.path("environments"));
    const cp = await new Deno.Command("cp", { args: ["-r", EXAMPLE, home.path("environments")] }).output();
    assertEquals(cp.code, 0);
    // Nothing answers at this address and there is no API key: every model answer must come from a cassette.
    const env = { ...home.env, STN_AI_BASE_URL: "http://127.0.0.1:9/v1", OPENAI_API_KEY: "" };
    const junit = home.path("reports", "stn.xml");
    const out = await runStn(["test", "--junit", junit, "--coverage-min", "50"], { env });
    assertEquals(out.code, 0, out.stdout + out.stderr);
    assertStringIncludes(out.stdout, "7/7 passed");
    assertStringIncludes(out.stdout, "follow-up  100%");
    const xml = await Deno.readTextFile(junit);
    assertEquals(XMLValidator.validate(xml), true);
    const doc = new XMLParser({ ignoreAttributes: false }).parse(xml);
    assertEquals(doc.testsuites["@_tests"], "7");
    assertEquals(doc.testsuites["@_failures"], "0");
    const suites = [doc.testsuites.testsuite].flat().map((s: Record<string, string>) => s["@_name"]).sort();
    assertEquals(suites, ["tests/agents.test.yaml", "tests/follow-up.test.yaml"]);
    // The suite wrote nothing into the environment it tested.
    const cassettes = [...Deno.readDirSync(join(home.path("environments", "default", "tests", "cassettes")))];
    assertEquals(cassettes.length, 3);
  } finally {
    await home.cleanup();
  }
});
