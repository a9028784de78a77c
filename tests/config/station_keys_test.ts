import { assert, assertEquals, assertMatch, assertStringIncludes, assertThrows } from "../helpers/assert.ts";
import { loadConfig } from "../../src/config/load.ts";
import { migrateStationConfig } from "../../src/config/migrate_station.ts";
import { StationError } from "../../src/errors.ts";
import { tempHome } from "../helpers/home.ts";

const STATION_CONFIG = Deno.readTextFileSync(
  new URL("../fixtures/station_home/home/config.yaml", import.meta.url),
);

Deno.test("config: Station's config.yaml is read as stn's, one warning per key naming the stn key", async () => {
  const home = await tempHome();
  try {
    home.writeConfig(STATION_CONFIG.replace("api_port: 8585", "api_port: 9585"));
    const { values, warnings } = loadConfig({ env: home.env });
    assertEquals([values.ai.provider, values.ai.model], ["openai", "gpt-4o-mini"]);
    assertEquals([values.server.port, values.server.mcp_port], [9585, 8586]);
    for (const key of ["ai_provider", "ai_model", "api_port", "mcp_port", "ssh_port", "database_url"]) {
      assertEquals(
        warnings.filter((w) => w.startsWith(`config.yaml: ${key} is Station's key`)).length,
        1,
        key,
      );
    }
    assertStringIncludes(warnings.join("\n"), "api_port is Station's key: read as server.port");
    assertStringIncludes(warnings.join("\n"), "ssh_port is Station's key: ignored (stn has no SSH console)");
    // stn's own key wins over Station's.
    home.writeConfig("api_port: 1111\nserver:\n  port: 2222\n");
    assertEquals(loadConfig({ env: home.env }).values.server.port, 2222);
    // Station's faker templates carry their name and may leave model empty; stn's key is faker.templates.
    home.writeConfig(
      "faker_templates:\n  aws:\n    name: aws\n    description: AWS data\n    instruction: Be AWS\n    model: ''\n",
    );
    assertEquals(loadConfig({ env: home.env }).values.faker.templates, {
      aws: { description: "AWS data", instruction: "Be AWS" },
    });
  } finally {
    await home.cleanup();
  }
});

Deno.test("config: Station's variables are read with a warning naming stn's; stn's own win", async () => {
  const home = await tempHome();
  try {
    for (const name of ["STN_API_PORT", "STATION_API_PORT", "API_PORT"]) {
      const { values, warnings } = loadConfig({ env: { ...home.env, [name]: "9001" } });
      assertEquals(values.server.port, 9001, name);
      assertEquals(warnings, [
        `${name} is Station's variable: read as server.port (stn's is STN_SERVER_PORT)`,
      ]);
    }
    const mcp = loadConfig({ env: { ...home.env, STN_MCP_PORT: "9002" } });
    assertEquals(mcp.values.server.mcp_port, 9002);
    const both = loadConfig({ env: { ...home.env, STN_SERVER_PORT: "9003", API_PORT: "9004" } });
    assertEquals([both.values.server.port, both.warnings], [9003, []]);
  } finally {
    await home.cleanup();
  }
});

Deno.test("config: an unknown key warns with the key meant and blocks nothing", async () => {
  const home = await tempHome();
  try {
    home.writeConfig("server:\n  prot: 1\nsurver:\n  port: 2\nlog:\n  level: debug\n");
    const { values, warnings } = loadConfig({ env: home.env });
    assertEquals(values.log.level, "debug");
    assertEquals(warnings.sort(), [
      "config.yaml: server.prot: unknown key, ignored (did you mean server.port?)",
      "config.yaml: surver: unknown key, ignored (did you mean server?)",
    ]);
  } finally {
    await home.cleanup();
  }
});

Deno.test("config: ollama is openai-compatible at Ollama's URL; cloudshipai says what to use", async () => {
  const home = await tempHome();
  try {
    const ollama = loadConfig({ env: { ...home.env, STN_AI_PROVIDER: "ollama" } });
    assertEquals([ollama.values.ai.provider, ollama.values.ai.base_url], [
      "openai-compatible",
      "http://127.0.0.1:11434/v1",
    ]);
    assertMatch(ollama.warnings[0], /^STN_AI_PROVIDER: ai\.provider "ollama" is Station's name/);
    home.writeConfig("ai_provider: ollama\nai_base_url: http://gpu:11434\n");
    assertEquals(loadConfig({ env: home.env }).values.ai.base_url, "http://gpu:11434/v1");
    home.writeConfig("ai_provider: cloudshipai\n");
    const err = assertThrows(() => loadConfig({ env: home.env }), StationError) as StationError;
    assertEquals([err.code, err.exitCode], ["config_invalid", 2]);
    assertMatch(err.message, /^config\.yaml: ai\.provider: "cloudshipai" is Station's CloudShip AI/);
    assertStringIncludes(err.hint!, "openai, anthropic, gemini, or openai-compatible");
  } finally {
    await home.cleanup();
  }
});

Deno.test("config: no error message has an empty path segment", async () => {
  const home = await tempHome();
  try {
    home.writeConfig("- a list\n");
    const err = assertThrows(() => loadConfig({ env: home.env }), StationError) as StationError;
    assert(!/: :/.test(err.message), err.message);
  } finally {
    await home.cleanup();
  }
});

Deno.test("config migrate: Station's keys move to stn's, comments stay, the rest is listed", () => {
  const { text, changes } = migrateStationConfig(STATION_CONFIG, "config.yaml");
  assert(text.startsWith("# Station's config, as `stn init` of the Go project writes it"), text);
  assertStringIncludes(
    text,
    "ai:\n  provider: openai # the provider every agent uses\n  model: gpt-4o-mini\n",
  );
  assertStringIncludes(text, "server:\n  port: 8585\n  mcp_port: 8586\n");
  assertStringIncludes(text, "# ssh_port (stn has no SSH console)");
  assert(!/^ssh_port:/m.test(text) && !/^ai_provider:/m.test(text), text);
  assertStringIncludes(changes.join("\n"), "ai_provider → ai.provider");
  // The result is a config stn loads without a warning; migrating it again changes nothing.
  assertEquals(migrateStationConfig(text, "config.yaml").changes, []);
  const ollama = migrateStationConfig("ai_provider: ollama\nai_model: llama3.1\n", "c.yaml");
  assertEquals(
    ollama.text,
    "ai:\n  provider: openai-compatible\n  model: llama3.1\n  base_url: http://127.0.0.1:11434/v1\n",
  );
});
