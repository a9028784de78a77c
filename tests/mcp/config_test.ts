import { join } from "node:path";
import { mcpConfigPaths } from "../../src/environment_files/mcp_configs.ts";
import { listMcpConfigFiles, type McpConfigFile, readMcpConfigFile } from "../../src/mcp/config/files.ts";
import { displayTemplate, renderServer } from "../../src/mcp/config/render.ts";
import { readVariables, variableSource } from "../../src/environment_files/variables.ts";
import { StationError } from "../../src/errors.ts";
import { assert, assertEquals, assertMatch, assertStringIncludes } from "../helpers/assert.ts";

/** An environment folder with the given files (paths relative to it). */
async function envWith(files: Record<string, string>): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "stn-mcp-config-" });
  for (const [name, text] of Object.entries(files)) {
    await Deno.mkdir(join(dir, name, ".."), { recursive: true });
    await Deno.writeTextFile(join(dir, name), text);
  }
  return dir;
}

async function parsed(file: string): Promise<McpConfigFile> {
  const r = await readMcpConfigFile(file);
  assert("servers" in r, JSON.stringify(r));
  return r;
}

Deno.test("mcp config: both locations are read, *.openapi.json and other files are not", async () => {
  const dir = await envWith({
    "github.json": JSON.stringify({ mcpServers: { gh: { command: "gh-mcp" } } }),
    "api.openapi.json": "{}",
    "variables.yml": "A: 1\n",
    "mcp-configs/fs.json": JSON.stringify({ servers: { fs: { url: "http://127.0.0.1:1/mcp" } } }),
    "agents/x.json": "{}",
  });
  try {
    await Deno.symlink(join(dir, "github.json"), join(dir, "mcp-configs", "linked.json"));
    assertEquals(await listMcpConfigFiles(dir), [
      join(dir, "github.json"),
      join(dir, "mcp-configs", "fs.json"),
      join(dir, "mcp-configs", "linked.json"),
    ]);
    // `env show` and bundles see the same files as sync (one rule, environment_files/mcp_configs.ts).
    assertEquals(await mcpConfigPaths(dir), [
      "github.json",
      "mcp-configs/fs.json",
      "mcp-configs/linked.json",
    ]);
    const fs = await parsed(join(dir, "mcp-configs", "fs.json"));
    assertEquals(fs.servers.map((s) => [s.name, s.transport]), [["fs", "http"]]); // `servers` works as `mcpServers`
    assertMatch(fs.checksum, /^sha256:[0-9a-f]{64}$/);
    assertEquals(await listMcpConfigFiles(join(dir, "nowhere")), []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("mcp config: placeholders are filled from variables.yml first, then the process environment", async () => {
  Deno.env.set("STN_TEST_MCP_FROM_ENV", "env-value");
  Deno.env.set("STN_TEST_MCP_BOTH", "env-loses");
  const dir = await envWith({
    // A key without a value is not set (the process environment fills it); "" is a value.
    "variables.yml":
      "ROOT: /data\nSTN_TEST_MCP_BOTH: yml-wins\nPORT: 8080\nSTN_TEST_MCP_FROM_ENV:\nBLANK: ''\n",
    "servers.json": JSON.stringify({
      mcpServers: {
        fs: {
          command: "fs-server",
          args: ["{{ .ROOT }}", "--port={{.PORT}}", "{{- .STN_TEST_MCP_BOTH -}}"],
          env: { FROM_ENV: "{{ .STN_TEST_MCP_FROM_ENV }}", N: 3, B: "{{ .BLANK }}" },
        },
      },
    }),
    // Station fills placeholders before parsing, so one may stand outside quotes.
    "mcp-configs/bare.json": '{"mcpServers": {"b": {"command": "b", "args": [{{ .PORT }}],\n' +
      '  "env": {"P": {{- .PORT -}}, "Q": "{\\"{{ .ROOT }}\\"}"}}}}',
  });
  try {
    const [t] = (await parsed(join(dir, "servers.json"))).servers;
    const { spec } = renderServer(t, variableSource(dir, await readVariables(dir)));
    assertEquals(spec, {
      transport: "stdio",
      command: "fs-server",
      args: ["/data", "--port=8080", "yml-wins"],
      env: { FROM_ENV: "env-value", N: "3", B: "" },
      cwd: undefined,
    });
    const [bare] = (await parsed(join(dir, "mcp-configs", "bare.json"))).servers;
    const rendered = renderServer(bare, variableSource(dir, await readVariables(dir))).spec;
    assertEquals(rendered.transport === "stdio" && [rendered.args, rendered.env], [["8080"], {
      P: "8080",
      Q: '{"/data"}',
    }]);
  } finally {
    Deno.env.delete("STN_TEST_MCP_FROM_ENV");
    Deno.env.delete("STN_TEST_MCP_BOTH");
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("mcp config: a variable without a value is an error naming the file, line and variable", async () => {
  const dir = await envWith({
    "variables.yml": "STN_TEST_NO_SUCH_TOKEN: ~\n",
    "mcp-configs/remote.json": '{\n  "mcpServers": {\n    "remote": {\n      "url": "https://x/mcp",\n' +
      '      "headers": {"Authorization": "Bearer {{ .STN_TEST_NO_SUCH_TOKEN }}"}\n    }\n  }\n}\n',
  });
  try {
    const file = join(dir, "mcp-configs", "remote.json");
    const [t] = (await parsed(file)).servers;
    let err: unknown;
    try {
      renderServer(t, variableSource(dir, await readVariables(dir)));
    } catch (e) {
      err = e;
    }
    assert(err instanceof StationError);
    assertEquals(err.code, "mcp_variable_missing");
    assertStringIncludes(err.message, `${file}:3: server remote uses {{ .STN_TEST_NO_SUCH_TOKEN }}`);
    assertStringIncludes(err.hint!, join(dir, "variables.yml"));
    assertStringIncludes(err.hint!, "environment variable STN_TEST_NO_SUCH_TOKEN");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("mcp config: malformed JSON and wrong shapes are errors with file:line and a hint", async () => {
  const dir = await envWith({
    "syntax.json": '{\n  "mcpServers": {\n    "a": {"command": "x",}\n  }\n}\n',
    "empty.json": "",
    "noservers.json": '{"name": "x"}',
    "shapes.json": [
      "{",
      '  "mcpServers": {',
      '    "good": {"command": "ok"},',
      '    "both": {"command": "x", "url": "http://y"},',
      '    "neither": {"args": []},',
      '    "badargs": {"command": "x", "args": "not-a-list"},',
      '    "sse": {"type": "sse", "url": "http://y/sse"},',
      '    "tmpl": {"command": "x", "args": ["{{ env \\"HOME\\" }}"]}',
      "  }",
      "}",
    ].join("\n"),
  });
  try {
    const issues = async (name: string) => {
      const r = await readMcpConfigFile(join(dir, name));
      return r.issues.map((i) => `${i.line}:${i.column ?? ""} ${i.message} | ${i.hint}`);
    };
    const [syntax] = await issues("syntax.json");
    assertEquals(
      syntax,
      "3:26 not valid JSON: expected a key (no comma before `}`), found `}` | fix the JSON syntax (a trailing comma? a missing quote?)",
    );
    assertMatch(
      (await issues("empty.json"))[0],
      /^1:1 not valid JSON: expected a value, found the end of the text/,
    );
    assertMatch((await issues("noservers.json"))[0], /no "mcpServers" object \| an MCP config is/);

    const shapes = await readMcpConfigFile(join(dir, "shapes.json"));
    assert("servers" in shapes);
    assertEquals(shapes.servers.map((s) => s.name), ["good"]); // the other servers of the file are not lost
    assertEquals(shapes.rejected, ["both", "neither", "badargs", "sse", "tmpl"]);
    const lines = shapes.issues.map((i) => `${i.line} ${i.message}`);
    assertEquals(lines.slice(0, 2), [
      "4 server both: has both command and url",
      "5 server neither: has neither command nor url",
    ]);
    assertMatch(lines[2], /^6 server badargs: args: /);
    assertMatch(lines[3], /^7 server sse: type: /);
    assertStringIncludes(shapes.issues[3].hint!, "SSE transport is not supported");
    assertEquals(lines[4], '8 server tmpl: {{ env "HOME" }} is not a placeholder stn can fill');
    assertStringIncludes(shapes.issues[4].hint!, "{{ .NAME }}");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("mcp config: variables.yml must be a flat map; secrets written in a file are masked in the stored form", async () => {
  const dir = await envWith({
    "variables.yml": "A: 1\nNESTED:\n  x: 1\n",
    "s.json": JSON.stringify({
      mcpServers: {
        gh: {
          command: "gh",
          args: ["--token", "literal-token-1", "--api-key=literal-key-2", "--verbose", "x"],
          env: { GITHUB_TOKEN: "literal-token-3", OTHER_TOKEN: "{{ .T }}", PLAIN: "visible" },
        },
        web: {
          url: "https://h/mcp?api_key=literal-4&q=1",
          headers: { Authorization: "Bearer literal-5", "X-Trace": "on" },
        },
      },
    }),
  });
  try {
    const err = await readVariables(dir).catch((e) => e);
    assert(err instanceof StationError);
    assertEquals([err.code, err.message], [
      "variables_invalid",
      `${join(dir, "variables.yml")}:2: NESTED: expected a single value, not a list or map`,
    ]);

    const [gh, web] = (await parsed(join(dir, "s.json"))).servers;
    const shown = JSON.stringify([displayTemplate(gh), displayTemplate(web)]);
    for (const secret of ["literal-token-1", "literal-key-2", "literal-token-3", "literal-4", "literal-5"]) {
      assert(!shown.includes(secret), `${secret} in ${shown}`);
    }
    assertEquals(displayTemplate(gh).args, ["--token", "********", "--api-key=********", "--verbose", "x"]);
    assertEquals(displayTemplate(gh).env, {
      GITHUB_TOKEN: "********",
      OTHER_TOKEN: "{{ .T }}",
      PLAIN: "visible",
    });
    assertEquals(displayTemplate(web).url, "https://h/mcp?api_key=********&q=1");

    // The rendered form lists every secret value, so messages about the server can hide them.
    const { secrets } = renderServer(gh, variableSource(dir, { T: "from-vars-6" }));
    assertEquals(secrets.sort(), ["from-vars-6", "literal-key-2", "literal-token-1", "literal-token-3"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
