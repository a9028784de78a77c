/**
 * The files `stn init` puts in `environments/default/`: an agent, an MCP config and a workflow that run
 * as they are (the workflow needs no model key; the agent needs only the provider's key). Kept as text
 * here rather than read from examples/ so a compiled `stn` carries them.
 */

/** agents/hello.prompt: a plain agent, no tools, the default model (ai.model). */
export const EXAMPLE_AGENT = `---
metadata:
  name: hello
  description: Answers in one short, friendly paragraph (the example agent of stn init).
  tags: [example]
max_steps: 3
---
{{role "system"}}
You are a concise assistant running in stn. Answer in one short, friendly paragraph.
To give this agent tools, list them under \`tools:\` (e.g. __list_directory from the
filesystem MCP server in mcp-configs/filesystem.json) and run \`stn sync\`.

{{role "user"}}
{{userInput}}
`;

/**
 * The MCP filesystem server of the example, pinned. It runs under Deno (which stn already needs) rather
 * than npx: no Node.js, offline from Deno's cache after the first download (scripts/setup fetches it),
 * `--no-config` so it never reads or rewrites a deno.json/deno.lock of the folder stn runs in, and
 * Deno's permissions hold it to FILESYSTEM_ROOT whatever the server itself does.
 */
export const EXAMPLE_MCP_SERVER = "npm:@modelcontextprotocol/server-filesystem@2026.8.31";

/** mcp-configs/filesystem.json: the MCP filesystem server from npm, rooted at a variable. */
export const EXAMPLE_MCP_CONFIG = `{
  "name": "filesystem",
  "description": "Files under FILESYSTEM_ROOT as agent tools (the MCP filesystem server from npm, run by Deno).",
  "mcpServers": {
    "filesystem": {
      "command": "deno",
      "args": [
        "run", "--no-config", "--allow-env",
        "--allow-read={{ .FILESYSTEM_ROOT }}", "--allow-write={{ .FILESYSTEM_ROOT }}",
        "${EXAMPLE_MCP_SERVER}", "{{ .FILESYSTEM_ROOT }}"
      ]
    }
  }
}
`;

/** workflows/hello.workflow.yaml: transform, switch and inject steps — no model, no sandbox. */
export const EXAMPLE_WORKFLOW =
  `# The example workflow of \`stn init\`: it needs no model key (transform, switch and inject steps).
#   stn workflow run hello --input '{"name": "Ada"}'
id: hello
name: Hello
description: Greets someone, and says so when their name is long.
inputSchema:
  type: object
  properties:
    name: { type: string, minLength: 1, default: world }
states:
  - id: measure
    type: transform
    expression: "{ 'name': name, 'letters': $length(name) }"
    next: route

  - id: route
    type: switch
    conditions:
      - if: "measure.letters > 8"
        next: long
    defaultNext: short

  - id: long
    type: inject
    data: { text: "Hello, \${measure.name}! That is a long name: \${measure.letters} letters." }
    resultPath: reply
    next: done

  - id: short
    type: inject
    data: { text: "Hello, \${measure.name}!" }
    resultPath: reply
    next: done

  - id: done
    type: transform
    expression: "{ 'greeting': reply.text, 'letters': measure.letters }"
`;

/** variables.yml: the one variable the MCP config needs, pointing at the home's workspace folder. */
export function exampleVariables(workspace: string): string {
  return `# Values for the {{ .NAME }} placeholders of this environment's MCP configs.
# Secret-looking names (…TOKEN, …KEY, …SECRET, …PASSWORD, …CREDENTIAL, …AUTH) are masked in every output.
# Set them with: stn env vars set default NAME -   (reads the value from stdin)
FILESYSTEM_ROOT: ${JSON.stringify(workspace)}
`;
}
