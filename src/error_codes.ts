/**
 * The catalogue of every error code stn answers with (docs/design/errors.md#one-error-type): one line per
 * code with its HTTP status, the CLI exit code when it ends a command, and what it means. `StationError`
 * takes only these codes, so a new code is one new line here (or, for agent runs, evals, tests and the CLI,
 * in error_codes_tools.ts). Exit codes: 1 failure, 2 usage error (a bad
 * flag, value or file the user gave the CLI); `workflow run --wait` ends with 3, 4 or 5 and a busy
 * STATION_HOME with 75 (docs/cli.md). Errors that come back from the server keep the exit code of their code
 * here.
 */

import { TOOL_ERROR_CODES } from "./error_codes_tools.ts";

/** [HTTP status, CLI exit code, meaning]. */
type Entry = readonly [status: number, exit: 1 | 2 | 3 | 4 | 5 | 75, meaning: string];

export const ERROR_CODES = {
  // Requests and input
  invalid_request: [400, 1, "the request (body, query or path) does not match the API contract"],
  invalid_json: [400, 1, "the request body is not valid JSON"],
  invalid_cursor: [400, 1, "an event cursor is neither a sequence number nor `now`"],
  invalid_key: [400, 1, "a file key is malformed (bad segment, encoding or length)"],
  unauthorized: [401, 1, "the API token is missing or wrong"],
  cross_site_request: [403, 1, "a browser sent a state-changing request from another site (CSRF protection)"],
  host_not_allowed: [
    403,
    1,
    "the request's Host is not a name stn answers to (DNS-rebinding protection: server.allowed_hosts)",
  ],
  origin_not_allowed: [
    403,
    1,
    "a browser page's Origin is not allowed (server.public_url, server.allowed_hosts)",
  ],
  not_found: [404, 1, "no such API route"],
  http_error: [500, 1, "an HTTP-level failure without a more specific code"],
  internal_error: [500, 1, "an unexpected failure inside stn (a bug: please report it)"],
  station_unreachable: [503, 1, "the CLI cannot reach the stn server"],
  invalid_response: [502, 1, "the server answered something that does not match the API contract"],
  stream_ended: [502, 1, "a streamed answer ended before its result"],
  body_too_large: [413, 1, "a JSON/YAML request body is over server.max_body_bytes"],
  headers_too_large: [431, 1, "the request headers are over node's 16 KiB"],
  bad_request: [400, 1, "the request is not valid HTTP/1.1"],
  request_timeout: [
    408,
    1,
    "the request did not arrive in time (server.header_timeout, server.body_idle_timeout)",
  ],
  request_aborted: [400, 1, "the client closed the connection before its request body was complete"],
  too_deep: [400, 1, "objects or arrays nested deeper than 256 levels"],
  idempotency_key_reused: [
    409,
    1,
    "an Idempotency-Key already started a run (within 24 h) with a different request body",
  ],
  document_too_large: [413, 1, "a YAML document's aliases (*name) expand it past its size limit"],
  // Configuration and startup
  config_invalid: [400, 2, "config.yaml or an environment override has a bad value"],
  config_not_found: [400, 2, "the config file given does not exist"],
  config_unreadable: [400, 2, "the config file cannot be read or parsed"],
  api_token_required: [400, 2, "serving beyond loopback needs server.api_token"],
  db_open_failed: [500, 1, "the SQLite ledger cannot be opened"],
  ledger_unreadable: [
    500,
    1,
    "stn cannot tell whether a station.db is its own ledger (unreadable at the moment): it writes nothing",
  ],
  ledger_foreign: [
    500,
    1,
    "the ledger path holds a database stn did not create (Station's station.db): left untouched",
  ],
  listen_failed: [500, 1, "the HTTP server cannot listen on the address"],
  port_in_use: [500, 1, "the HTTP port is taken (another stn serve?)"],
  station_home_busy: [
    503,
    75,
    "another stn process holds the station's NATS store (embedded mode: nothing started)",
  ],
  nats_server_not_found: [500, 1, "no nats-server binary was found"],
  embedded_nats_server_corrupt: [
    500,
    1,
    "the nats-server embedded in this stn binary does not match its digest",
  ],
  nats_start_failed: [500, 1, "the managed nats-server did not start"],
  nats_server_died: [500, 1, "the managed nats-server exited while stn was running"],
  nats_unreachable: [503, 1, "the NATS server cannot be reached"],
  nats_unauthorized: [500, 1, "the NATS server refused stn's credentials (nats.user/password/token/creds)"],
  nats_tls_failed: [500, 1, "the NATS server's TLS certificate does not verify (nats.tls_ca_file)"],
  nats_credentials_unreadable: [500, 1, "a NATS creds, nkey or generated config file cannot be read"],
  nats_cluster_too_small: [500, 1, "the NATS cluster has fewer JetStream servers than nats.replicas"],
  worker_needs_nats: [400, 2, "`stn worker` was started without a NATS URL (--nats-url or nats.url)"],
  invalid_queue: [400, 2, "a task queue name is not lowercase letters, digits, _ and -"],
  shutdown: [503, 1, "the station is stopping"],
  // Workflows
  workflow_invalid: [422, 1, "a workflow definition is invalid (details.errors lists each issue)"],
  invalid_definition: [400, 1, "an inline definition sent to start a run is invalid"],
  workflow_id_mismatch: [400, 1, "the definition's id differs from the id in the path"],
  workflow_not_found: [404, 1, "no stored workflow with that id"],
  workflow_version_not_found: [404, 1, "the workflow has no such version"],
  workflow_disabled: [409, 1, "the workflow is disabled; enable it to run it"],
  workflow_in_use: [409, 1, "the workflow has runs in progress"],
  environment_not_found: [404, 1, "no such environment folder"],
  invalid_environment: [400, 1, "an environment name is malformed"],
  input_invalid: [400, 1, "a run's input does not match the workflow's inputSchema"],
  expression_invalid: [422, 1, "a JSONata expression does not compile"],
  expression_failed: [422, 1, "a JSONata expression failed on its data"],
  expression_too_deep: [422, 1, "a JSONata expression recursed too deeply"],
  expression_timeout: [422, 1, "a JSONata expression ran too long"],
  expression_too_large: [422, 1, "a JSONata expression built too large a value"],
  template_invalid: [422, 1, "a `{{ }}` template is not closed"],
  file_unreadable: [
    400,
    1,
    "a file cannot be read (a workflow file; in a sandbox, one its user may not open)",
  ],
  migration_incomplete: [422, 1, "`stn workflow migrate`: some Station constructs could not be converted"],
  migration_pending: [409, 1, "`stn workflow migrate --check`: files would change"],
  output_required: [400, 2, "`stn workflow migrate` of a directory needs -o OUT"],
  no_workflow_files: [400, 2, "a directory given to `stn workflow migrate` holds no `*.workflow.*` files"],
  // Environments, variables and bundles
  environment_exists: [409, 1, "an environment with that name already exists"],
  variable_not_found: [404, 1, "the variable is not set in the environment's variables.yml"],
  invalid_variable_name: [400, 1, "a variable name is not letters, digits and `_`"],
  variables_invalid: [422, 1, "variables.yml is not a flat map of NAME: value"],
  unsafe_path: [400, 1, "a file of an environment is a link that leads outside it"],
  bundle_invalid: [
    400,
    1,
    "a bundle is malformed or unsafe: absolute path, `..`, a link, a bad checksum (details.member)",
  ],
  bundle_too_large: [413, 1, "a bundle has too many members or too many bytes"],
  bundle_secret: [422, 1, "an MCP config holds a literal secret, so it cannot go into a bundle"],
  bundle_download_failed: [502, 1, "a bundle URL could not be downloaded"],
  bundle_manifest_mismatch: [
    400,
    1,
    "a bundle's manifest.json lists other agents, MCP servers or workflows than the archive holds",
  ],
  bundle_conflict: [
    409,
    1,
    "a bundle would take over a stored workflow of the same id: install with --force",
  ],
  bundle_variables_missing: [
    400,
    1,
    "a non-interactive install lacks values for variables its MCP configs use: --var NAME=VALUE (details.missing)",
  ],
  // Agent definitions
  agent_not_found: [
    404,
    1,
    "no agent with that name in the environment (agents are synced from agents/*.prompt)",
  ],
  agent_invalid: [422, 1, "an agent `.prompt` file is invalid (details lists each issue)"],
  agent_tools_pending: [
    409,
    1,
    "an agent names MCP tools the environment's catalogue lacks: its servers are not approved or discovered yet",
  ],
  no_agent_files: [400, 2, "`stn agent validate` found no `.prompt` files to check"],
  // Runs, approvals, events and signals
  run_not_found: [404, 1, "no workflow run with that id"],
  run_finished: [409, 1, "the run has already ended"],
  no_worker: [504, 1, "a step's task queue had no live worker within the step's timeout"],
  run_not_paused: [409, 1, "resume asked of a run that is not paused"],
  run_not_retryable: [
    409,
    1,
    "retry asked of a run that is not failed or canceled, or has no step left to retry",
  ],
  singleton_active: [
    409,
    1,
    "a retry of a workflow with `singleton: {mode: skip}` while another run holds its singleton key",
  ],
  definition_incompatible: [
    422,
    1,
    "a retry's or fork's definition lacks a completed step's id, changes its type, or lacks the step to resume at",
  ],
  step_not_in_run: [
    404,
    1,
    "the run has no attempt of that step (fork and eval name a step the run reached)",
  ],
  approval_not_found: [404, 1, "no approval with that id"],
  approval_decided: [409, 1, "the approval was already decided"],
  hook_not_found: [404, 1, "no webhook of that name is configured (events.hooks)"],
  invalid_signature: [401, 1, "a webhook's signature or bearer secret is missing or wrong"],
  hook_payload_invalid: [400, 1, "a webhook's body is not JSON, or its event mapping failed on it"],
  canceled: [409, 1, "the work was canceled"],
  step_timeout: [504, 1, "a step exceeded its timeout"],
  // Files
  file_not_found: [404, 1, "no such file (in the store or the sandbox)"],
  file_required: [400, 1, "a multipart upload has no `file` part"],
  file_too_large: [413, 1, "the file is over the configured size limit"],
  storage_quota_exceeded: [507, 1, "the file store is full"],
  range_not_satisfiable: [416, 1, "the asked byte range is outside the file"],
  checksum_mismatch: [500, 1, "the bytes read do not match the stored checksum"],
  file_changed: [409, 1, "the file was replaced while it was being read"],
  unsupported_object: [400, 1, "the object store entry is not a stn file"],
  // Sandboxes
  sandbox_unavailable: [503, 1, "sandboxes are disabled or Docker is not reachable"],
  sandbox_not_found: [404, 1, "no sandbox with that id"],
  tool_not_found: [404, 1, "no sandbox tool by that name (GET /api/v1/sandbox/tools lists them)"],
  sandbox_closed: [410, 1, "the sandbox was closed"],
  sandbox_gone: [410, 1, "the sandbox's container has disappeared"],
  sandbox_not_running: [409, 1, "the sandbox's container is not running"],
  sandbox_timeout: [
    504,
    1,
    "a Docker call or stn's helper in the sandbox did not answer within sandbox.docker_timeout",
  ],
  publish_scope_denied: [403, 1, "publish would replace a key outside the sandbox's own scope"],
  path_changed: [
    409,
    1,
    "a sandbox path was changed while used: a write's directory removed, a symlink swapped in and out (ELOOP)",
  ],
  sandbox_disk_full: [507, 1, "a write to the sandbox's /workspace found it full (sandbox.disk_mb)"],
  sandbox_command_failed: [500, 1, "a helper command inside the sandbox failed"],
  sandbox_channel_lost: [503, 1, "the sandbox channel broke while a command ran (it was killed, not re-run)"],
  docker_error: [502, 1, "the Docker Engine answered with an error"],
  image_not_allowed: [400, 1, "the image is not in sandbox.allowed_images"],
  image_unavailable: [503, 1, "the image cannot be pulled or found"],
  unknown_runtime: [400, 1, "no such sandbox runtime"],
  network_not_allowed: [403, 1, "network access is not allowed for sandboxes here"],
  pip_packages_missing: [400, 1, "the sandbox image does not carry the pip_packages an agent names"],
  run_id_required: [400, 1, "a workflow-scoped sandbox needs run_id"],
  invalid_command: [400, 1, "the command to run is empty or malformed"],
  exec_canceled: [409, 1, "the command was canceled before it finished"],
  path_outside_workspace: [400, 1, "the path is not inside /workspace"],
  path_invalid: [400, 1, "a sandbox path has a name over 255 bytes or is over 4095 bytes in all"],
  is_a_directory: [400, 1, "a file was asked for but the path is a directory"],
  not_a_directory: [400, 1, "a directory was asked for but the path is not one"],
  not_a_file: [400, 1, "the path is not a regular file"],
  size_mismatch: [400, 1, "the bytes sent differ from the announced size"],
  // MCP servers (agent tools)
  mcp_config_invalid: [
    400,
    1,
    "an MCP config file (a .json file of an environment or of its mcp-configs folder) is malformed",
  ],
  mcp_variable_missing: [
    400,
    1,
    "an MCP config's {{ .VAR }} has no value in variables.yml or the environment",
  ],
  mcp_connect_failed: [502, 1, "an MCP server cannot be started or reached"],
  mcp_timeout: [504, 1, "an MCP server did not answer in time (handshake, tool list or call)"],
  mcp_call_failed: [502, 1, "an MCP request failed (the server answered a protocol error or went away)"],
  mcp_tool_error: [502, 1, "an MCP tool answered with an error (isError)"],
  mcp_tool_unknown: [400, 1, "no synced MCP server of the environment offers that tool"],
  mcp_tool_conflict: [409, 1, "two MCP servers of an environment offer a tool of the same name"],
  mcp_config_changed: [409, 1, "an MCP config file changed (or went) since the last `stn sync`"],
  mcp_sync_failed: [502, 1, "`stn sync`: some MCP configs or servers failed (the report lists each)"],
  mcp_server_untrusted: [
    403,
    1,
    "an MCP server is new, or its launch changed since approved: not started (`stn mcp approve`)",
  ],
  mcp_server_not_found: [404, 1, "no MCP server of that name in the environment's configs"],
  mock_spec_invalid: [400, 2, "a `stn mock` spec file does not validate (each issue with file:line:col)"],
  mock_builtin_unavailable: [
    400,
    2,
    "`stn mock <name>` names one of Station's built-in demo mocks; stn serves tools from a spec file instead",
  ],
  mock_tool_failed: [502, 1, "a mocked MCP tool answered with the error its spec gives (`error:`)"],
  mock_input_invalid: [400, 1, "a call to a mocked MCP tool has arguments its input_schema does not allow"],
  faker_session_not_found: [404, 1, "no `stn faker` session with that id under $STATION_HOME/faker/sessions"],
  faker_session_invalid: [500, 1, "a `stn faker` session file does not read as one"],
  faker_tools_invalid: [
    400,
    2,
    "a `stn faker --tools` file does not validate (each issue with file:line:col)",
  ],
  faker_generation_failed: [
    502,
    1,
    "`stn faker` got no usable data from the model (its call failed, or twice off the shape)",
  ],
  ...TOOL_ERROR_CODES,
} as const satisfies Record<string, Entry>;

/** Every error code stn uses. */
export type ErrorCode = keyof typeof ERROR_CODES;

/** True for a code in the catalogue (for codes read off the wire). */
export function isErrorCode(code: string): code is ErrorCode {
  return Object.hasOwn(ERROR_CODES, code);
}

/** The HTTP status, CLI exit code and meaning of a code. */
export function errorCodeInfo(code: ErrorCode): { status: number; exit: Entry[1]; meaning: string } {
  const [status, exit, meaning] = ERROR_CODES[code];
  return { status, exit, meaning };
}
