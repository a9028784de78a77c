import { join } from "node:path";
import { placeholderNames, quoteBarePlaceholders } from "../../src/environment_files/placeholders.ts";
import { isSecretName } from "../../src/environment_files/secrets.ts";
import {
  getVariable,
  listVariables,
  setVariable,
  unsetVariable,
} from "../../src/environment_files/variables.ts";
import { parseMcpConfig } from "../../src/environment_files/mcp_configs.ts";
import { StationError } from "../../src/errors.ts";
import { assert, assertEquals, assertRejects, assertStringIncludes } from "../helpers/assert.ts";

Deno.test("placeholders: found without filling; a bare one still parses as JSON", () => {
  const text = `{"mcpServers": {"fs": {"command": "npx", "args": ["{{ .ROOT }}", "{{.ROOT}}"],
    "env": {"T": "Bearer {{- .API_TOKEN -}}"}, "port": {{ .PORT }}}}}`;
  assertEquals(placeholderNames(text), ["ROOT", "API_TOKEN", "PORT"]);
  const parsed = JSON.parse(quoteBarePlaceholders(text));
  assertEquals(parsed.mcpServers.fs.port, "{{ .PORT }}");
  assertEquals(parsed.mcpServers.fs.args, ["{{ .ROOT }}", "{{.ROOT}}"]);
  assertEquals(parseMcpConfig("x.json", text).servers, [{
    name: "fs",
    transport: "stdio",
    program: "npx",
    variables: ["ROOT", "API_TOKEN", "PORT"],
  }]);
  // A brace pair inside a string that is no placeholder, and escaped quotes, are left alone.
  assertEquals(JSON.parse(quoteBarePlaceholders(`{"a": "{{ not one }} \\" {{ .X }}"}`)), {
    a: '{{ not one }} " {{ .X }}',
  });
  assertEquals(parseMcpConfig("y.json", "{nope").error?.startsWith("not valid JSON"), true);
  assertEquals(parseMcpConfig("z.json", "{}").error, "no `mcpServers` object");
});

Deno.test("secret-looking names: TOKEN, KEY, SECRET, PASSWORD, CREDENTIAL, AUTH, any case", () => {
  for (
    const n of ["GITHUB_TOKEN", "api_key", "ClientSecret", "DB_PASSWORD", "AWS_CREDENTIALS", "Authorization"]
  ) {
    assert(isSecretName(n), n);
  }
  for (const n of ["FILESYSTEM_ROOT", "REGION", "USER_NAME"]) assert(!isSecretName(n), n);
});

Deno.test("variables.yml: set/get/unset, mode 0600, comments kept, secrets masked, bad files named", async () => {
  const dir = await Deno.makeTempDir({ prefix: "stn-vars-" });
  const file = join(dir, "variables.yml");
  try {
    const first = await setVariable(dir, "GITHUB_TOKEN", "ghp_abc");
    assertEquals(first, { name: "GITHUB_TOKEN", value: "********", secret: true, created: true });
    assertEquals((await Deno.stat(file)).mode! & 0o777, 0o600);
    assertEquals(await Deno.readTextFile(file), "GITHUB_TOKEN: ghp_abc\n");

    await Deno.writeTextFile(file, "# mine\nGITHUB_TOKEN: ghp_abc # keep this comment\nPORT: 8080\n");
    await Deno.chmod(file, 0o644);
    assertEquals((await setVariable(dir, "REGION", "eu-west-1")).created, true);
    assertEquals((await setVariable(dir, "PORT", "9090")).created, false);
    const text = await Deno.readTextFile(file);
    assertStringIncludes(text, "# mine\n");
    assertStringIncludes(text, "# keep this comment");
    assertStringIncludes(text, 'PORT: "9090"');
    assertEquals((await Deno.stat(file)).mode! & 0o777, 0o600, "rewriting makes the file private again");

    // A key without a value is not set (docs/design/agents.md#variables-and-secrets: the process environment
    // fills it); "" is set.
    await Deno.writeTextFile(file, `${await Deno.readTextFile(file)}EMPTY: ""\nBLANK:\n`);
    assertEquals(await listVariables(dir), [
      { name: "EMPTY", value: "", secret: false },
      { name: "GITHUB_TOKEN", value: "********", secret: true },
      { name: "PORT", value: "9090", secret: false },
      { name: "REGION", value: "eu-west-1", secret: false },
    ]);
    assertEquals((await getVariable(dir, "d", "GITHUB_TOKEN")).value, "********");
    assertEquals((await getVariable(dir, "d", "PORT")).value, "9090");

    let err = await assertRejects(() => getVariable(dir, "d", "BLANK"), StationError) as StationError;
    assertEquals(err.code, "variable_not_found");
    await unsetVariable(dir, "d", "BLANK"); // the key is still in the file, and goes
    assert(!(await Deno.readTextFile(file)).includes("BLANK"));
    await unsetVariable(dir, "d", "PORT");
    err = await assertRejects(() => getVariable(dir, "d", "PORT"), StationError) as StationError;
    assertEquals(err.code, "variable_not_found");
    err = await assertRejects(() => unsetVariable(dir, "d", "PORT"), StationError) as StationError;
    assertEquals(err.code, "variable_not_found");
    err = await assertRejects(() => setVariable(dir, "1BAD", "x"), StationError) as StationError;
    assertEquals(err.code, "invalid_variable_name");

    await Deno.writeTextFile(file, "A: [1, 2]\n");
    err = await assertRejects(() => listVariables(dir), StationError) as StationError;
    assertEquals(err.code, "variables_invalid");
    assertStringIncludes(err.message, "variables.yml:1: A: expected a single value");
    await Deno.writeTextFile(file, "A: 1\n  B: : :\n");
    err = await assertRejects(() => setVariable(dir, "C", "x"), StationError) as StationError;
    assertEquals(err.code, "variables_invalid");
    assertStringIncludes(err.message, "variables.yml:");
    assertEquals(
      await Deno.readTextFile(file),
      "A: 1\n  B: : :\n",
      "a bad file is reported, never rewritten",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
