import { assertEquals, assertMatch, assertThrows } from "../helpers/assert.ts";
import { loadConfig } from "../../src/config/load.ts";
import { configKeys } from "../../src/config/resolve.ts";
import { StationError } from "../../src/errors.ts";
import { tempHome } from "../helpers/home.ts";

Deno.test("config: defaults when there is no file", async () => {
  const home = await tempHome();
  try {
    const { values, file, paths } = loadConfig({ env: home.env });
    assertEquals(file, null);
    assertEquals(values.server, {
      host: "127.0.0.1",
      port: 8585,
      mcp_port: 8586,
      agent_port: 8587,
      mcp_auth: "auto",
      mcp_session_idle: 30 * 60_000,
      max_body_bytes: 4 * 1024 * 1024,
      allowed_hosts: [],
      header_timeout: 10_000,
      body_idle_timeout: 30_000,
    });
    assertEquals(values.nats.server_bin, "nats-server");
    assertEquals(paths.db, home.path("stn.db"));
  } finally {
    await home.cleanup();
  }
});

Deno.test("config: precedence is defaults < file < env < flags", async () => {
  const home = await tempHome();
  try {
    home.writeConfig("server:\n  port: 9001\n  mcp_port: 9002\nlog:\n  level: debug\n");
    const fromFile = loadConfig({ env: home.env }).values;
    assertEquals([fromFile.server.port, fromFile.server.mcp_port, fromFile.log.level], [9001, 9002, "debug"]);

    const env = { ...home.env, STN_SERVER_PORT: "9100", STN_LOG_LEVEL: "warn" };
    const fromEnv = loadConfig({ env }).values;
    assertEquals([fromEnv.server.port, fromEnv.server.mcp_port, fromEnv.log.level], [9100, 9002, "warn"]);

    const fromFlags = loadConfig({ env, flags: { "server.port": 9200, "log.level": undefined } }).values;
    assertEquals([fromFlags.server.port, fromFlags.log.level], [9200, "warn"]);
  } finally {
    await home.cleanup();
  }
});

Deno.test("config: STATION_API_TOKEN is an alias of server.api_token", async () => {
  const home = await tempHome();
  try {
    const { values } = loadConfig({ env: { ...home.env, STATION_API_TOKEN: "0123456789abcdef0123" } });
    assertEquals(values.server.api_token, "0123456789abcdef0123");
  } finally {
    await home.cleanup();
  }
});

Deno.test("config: STATION_DEBUG=true|1 and false|0 set log.agent_turns; anything else is a clear error", async () => {
  const home = await tempHome();
  try {
    const debug = (value: string) =>
      loadConfig({ env: { ...home.env, STATION_DEBUG: value } }).values.log.agent_turns;
    assertEquals([debug("true"), debug("1"), debug("false"), debug("0")], [true, true, false, false]);
    assertEquals(loadConfig({ env: home.env }).values.log.agent_turns, false);
    assertMatch(
      configError(() => debug("yes")).message,
      /STATION_DEBUG.*log\.agent_turns|log\.agent_turns.*STATION_DEBUG/,
    );
  } finally {
    await home.cleanup();
  }
});

function configError(fn: () => unknown): StationError {
  const err = assertThrows(fn, StationError) as StationError;
  assertEquals(err.exitCode, 2);
  assertEquals(err.code.startsWith("config_"), true);
  return err;
}

Deno.test("config: bad values name their source, key path and what was expected", async () => {
  const home = await tempHome();
  try {
    const cases: Array<[string, Record<string, string>, RegExp]> = [
      ["server:\n  port: abc\n", {}, /^config\.yaml: server\.port: expected a number, got "abc"$/m],
      ["server:\n  port: 70000\n", {}, /^config\.yaml: server\.port: expected ≤ 65535, got 70000$/m],
      ["log:\n  level: loud\n", {}, /^config\.yaml: log\.level: expected one of "debug", .*got "loud"$/m],
      [
        "server:\n  api_token: short\n",
        {},
        /server\.api_token: expected at least 16 characters, got "short"/,
      ],
      [
        "server:\n  api_token: not a bearer token!\n",
        {},
        /server\.api_token: letters, digits and \. _ ~ \+ \/ - only/,
      ],
      [
        "",
        { STN_SERVER_PORT: "eighty" },
        /^STN_SERVER_PORT: server\.port: expected a number, got "eighty"$/m,
      ],
      ["server: [1, 2]\n", {}, /server: expected an object, got \[1,2\]/],
      ["server:\n  port: [unclosed\n", {}, /^config\.yaml:\d+:\d+: not valid YAML/],
    ];
    for (const [yaml, env, expected] of cases) {
      home.writeConfig(yaml);
      const err = configError(() => loadConfig({ env: { ...home.env, ...env } }));
      assertMatch(err.message, expected, `for ${JSON.stringify(yaml)} ${JSON.stringify(env)}`);
    }
  } finally {
    await home.cleanup();
  }
});

Deno.test("config: --config pointing nowhere is a usage error", async () => {
  const home = await tempHome();
  try {
    const err = configError(() => loadConfig({ env: home.env, configPath: home.path("missing.yaml") }));
    assertEquals(err.code, "config_not_found");
  } finally {
    await home.cleanup();
  }
});

Deno.test("config: every key has an STN_ variable and a description", () => {
  for (const key of configKeys()) {
    assertEquals(key.env[0], "STN_" + key.path.replaceAll(".", "_").toUpperCase());
    assertEquals(typeof key.description, "string", `${key.path} needs .describe() for docs/configuration.md`);
  }
});
