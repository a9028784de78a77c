import { assert, assertEquals, assertThrows } from "../helpers/assert.ts";
import { clientSettings, simpleYaml } from "../../src/config/client_settings.ts";
import { loadConfig } from "../../src/config/load.ts";
import { parseYaml } from "../../src/lib/yaml.ts";
import { tempHome } from "../helpers/home.ts";

/** Removes a config file, if there is one. */
function noConfig(path: string): void {
  try {
    Deno.removeSync(path);
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
}

/** A document's leaves by dotted path, as the YAML reader sees them. */
function leaves(data: unknown, prefix = ""): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const [k, v] of Object.entries(data as Record<string, unknown>)) {
    const path = prefix ? `${prefix}.${k}` : k;
    if (v !== null && typeof v === "object") { for (const [p, x] of leaves(v, path)) out.set(p, x); }
    else out.set(path, v);
  }
  return out;
}

Deno.test("simpleYaml: whatever it reads, the YAML reader reads the same strings, without an error", () => {
  // Documents built from lines of every kind it must read or refuse, at every indentation (seeded).
  let seed = 7;
  const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) >>> 8) % n;
  const keys = ["log", "level", "format", "server", "api_token", "debug", "a", "b-c", "x_1", "model"];
  // Scalars it reads (strings and others) and forms it must leave to the YAML reader.
  const plain = [
    "warn",
    "openai/gpt-4o-mini",
    "http://127.0.0.1:11434/v1",
    "abc=",
    "v # note",
    "a b",
    "b  - c",
  ];
  const quoted = ["'warn'", '"x"', "'it''s'", "'a # b'", '"k: v"', "'true'", '"3"', "''", "'x' # c"];
  const other = ["3", "1.5e3", "true", "~", "null", "0x1F", ".inf", "1 2"];
  const refused = [
    "-x",
    "foo:",
    "a b:",
    "a: b",
    "a #c",
    "[1]",
    "{a: 1}",
    "&x y",
    "*x",
    "|",
    '"a\\"b"',
    "'a'b'",
    "'open",
    '"x" y',
    "'a'#c",
  ];
  const pools = [plain, plain, plain, quoted, quoted, other, other, refused];
  let read = 0;
  const nested = new Set<string>();
  for (let i = 0; i < 20_000; i++) {
    // Mostly well-formed nesting (a key without a value opens a block one level deeper), with slips.
    let depth = 0;
    const lines = Array.from({ length: 1 + rand(6) }, () => {
      const pool = pools[rand(pools.length)];
      const v = rand(3) === 0 ? "" : pool[rand(pool.length)];
      const indent = rand(10) === 0 ? rand(3) : depth;
      depth = v ? rand(indent + 1) : indent + 1;
      return `${" ".repeat(2 * indent + (rand(30) === 0 ? 1 : 0))}${keys[rand(keys.length)]}:${
        v ? ` ${v}` : ""
      }`;
    });
    if (depth > 0 && lines.at(-1)!.endsWith(":")) lines.push(`${" ".repeat(2 * depth)}model: x`);
    if (rand(4) === 0) lines.splice(rand(lines.length), 0, rand(2) ? "# comment" : "");
    const text = lines.join("\n") + "\n";
    const simple = simpleYaml(text);
    if (!simple) continue;
    read++;
    if (text.includes("\n  ")) nested.add(text);
    const doc = parseYaml(text);
    assertEquals(doc.errors.length, 0, `${JSON.stringify(text)}: ${doc.errors[0]?.message}`);
    // A scalar the YAML reader reads as a string is that string; any other is null.
    const seen = new Map([...leaves(doc.toJS())].map(([k, v]) => [k, typeof v === "string" ? v : null]));
    assertEquals(seen, simple, JSON.stringify(text));
  }
  assert(nested.size > 100, `only ${nested.size} nested documents were read: the test shows nothing`);
});

Deno.test("client settings: what the whole config says of the log and the token, wherever it can say it alone", async () => {
  const home = await tempHome();
  try {
    const cases: { yaml?: string; env?: Record<string, string> }[] = [
      {},
      { yaml: "ai:\n  provider: openai\n  model: openai/gpt-4o-mini\n" },
      { yaml: "log:\n  level: warn\n  format: json\n" },
      { yaml: "log:\n  level: 'warn'\n  format: \"json\" # for jq\n" },
      { yaml: "log:\n  level: warn\n", env: { STN_LOG_LEVEL: "error" } },
      { yaml: "# mine\nserver:\n  api_token: abcdefghijklmnop.qrst\n  port: 9000\n" },
      { yaml: "name: my station\nserver:\n  api_token: 'abcdefghijklmnop=='\n" },
      { yaml: "server:\n  api_token: abcdefghijklmnop\n", env: { STATION_API_TOKEN: "zyxwvutsrqponmlkj" } },
      { env: { STN_LOG_FORMAT: "json", STN_SERVER_API_TOKEN: "0123456789abcdef==" } },
    ];
    for (const c of cases) {
      if (c.yaml) home.writeConfig(c.yaml);
      else noConfig(home.path("config.yaml"));
      const env = { ...home.env, ...c.env };
      const fast = clientSettings(undefined, env);
      assert(fast, `read alone: ${JSON.stringify(c)}`);
      const { values, paths } = loadConfig({ env });
      assertEquals(fast, {
        paths,
        log: { level: values.log.level, format: values.log.format },
        ...(values.server.api_token ? { apiToken: values.server.api_token } : {}),
      }, JSON.stringify(c));
    }
  } finally {
    await home.cleanup();
  }
});

Deno.test("client settings: a value that is not valid, or a file read only in full, leaves it to the whole config", async () => {
  const home = await tempHome();
  try {
    const cases: { yaml?: string; env?: Record<string, string>; config?: string }[] = [
      { yaml: "log:\n  level: loud\n" },
      { yaml: "log:\n  level: 'loud'\n" },
      { yaml: 'log:\n  level: "w\\u0061rn"\n' },
      { yaml: "log: warn\n" },
      { yaml: "log:\nai:\n  model: x\n" },
      { yaml: "debug: true\n" },
      { yaml: "server:\n  api_token: short\n" },
      { yaml: "log:\n  level: warn\n  level: info\n" },
      { env: { STN_LOG_LEVEL: "loud" } },
      { env: { STATION_API_TOKEN: "has spaces in it, sixteen+" } },
      { config: "/nonexistent/stn-config.yaml" },
    ];
    for (const c of cases) {
      if (c.yaml) home.writeConfig(c.yaml);
      else noConfig(home.path("config.yaml"));
      assertEquals(clientSettings(c.config, { ...home.env, ...c.env }), null, JSON.stringify(c));
    }
    // A key client commands do not read is not theirs to check: `stn serve`, `stn config show` refuse it.
    home.writeConfig("server:\n  port: eighty\n");
    assertEquals(clientSettings(undefined, home.env)?.log.level, "info");
    assertThrows(() => loadConfig({ env: home.env }));
  } finally {
    await home.cleanup();
  }
});
