/**
 * The contract of `stn test`: a test file's cases (environments/<env>/tests/*.test.yaml, docs/testing.md),
 * and the test-run resource of POST /api/v1/tests, its results and its coverage.
 */

import { z } from "zod";

/** A JSONata expression (a string) evaluated against the case's result. */
const Jsonata = z.string().min(1).describe("a JSONata expression");

/** One scripted model answer: text, a structured output or tool calls (src/testing/script.ts answers them). */
export const ScriptedAnswer = z.strictObject({
  agent: z.string().optional().describe("only a run of this agent takes the answer (default: the next call)"),
  text: z.string().optional(),
  output: z.unknown().optional().describe("a structured output (the agent's output schema)"),
  tool_calls: z.array(
    z.strictObject({ name: z.string().min(1), args: z.record(z.string(), z.unknown()).default({}) }),
  ).optional(),
}).refine((a) => a.text !== undefined || a.output !== undefined || a.tool_calls?.length, {
  message: "a scripted answer needs text, output or tool_calls",
}).meta({ id: "TestScriptedAnswer" });
export type ScriptedAnswer = z.infer<typeof ScriptedAnswer>;

/** Where a case's model answers come from: a recorded cassette, or a script of answers in order. */
export const TestModel = z.union([
  z.strictObject({ cassette: z.string().min(1).describe("a cassette file, relative to the test file") }),
  z.strictObject({ script: z.array(ScriptedAnswer).min(1).describe("the model's answers, in order") }),
]).meta({ id: "TestModel" });
export type TestModel = z.infer<typeof TestModel>;

/** One answer of a mocked tool (src/testing/mocks.ts gives them). */
export const ToolAnswer = z.union([
  z.strictObject({
    result: z.unknown().describe("the tool's output: a string as it is, anything else as JSON"),
  }),
  z.strictObject({ expr: Jsonata.describe("JSONata over the call: `$` and `$args` are its arguments") }),
  z.strictObject({
    error: z.string().min(1).describe("the tool fails with this message (the model sees it)"),
  }),
]).meta({ id: "TestToolAnswer" });

/** A replaced MCP tool: one answer for every call, or a `sequence` answered in call order (the last repeats). */
export const ToolMock = z.union([ToolAnswer, z.strictObject({ sequence: z.array(ToolAnswer).min(1) })])
  .meta({ id: "TestToolMock" });
export type ToolMock = z.infer<typeof ToolMock>;

/** A decision for a human_approval step, by step id. */
export const TestApproval = z.strictObject({
  decision: z.enum(["approve", "reject", "timeout"]).describe(
    "timeout: leave it undecided until it times out",
  ),
  comment: z.string().optional(),
}).meta({ id: "TestApproval" });

/** A signal or event to deliver when a step waits for it. */
export const TestDelivery = z.strictObject({
  name: z.string().min(1),
  data: z.unknown().optional(),
}).meta({ id: "TestDelivery" });

/** An expected tool call: its name, a JSONata over its args that must be true, and how often. */
export const ExpectToolCall = z.strictObject({
  name: z.string().min(1),
  args: Jsonata.optional().describe("JSONata over the call's arguments, true for a matching call"),
  count: z.int().min(0).optional().describe("how many matching calls (default: at least one)"),
}).meta({ id: "TestExpectToolCall" });

/** The path of states taken in order, or sets that must be visited / not visited. */
export const ExpectSteps = z.union([
  z.array(z.string().min(1)).describe("the step ids of the run, in order"),
  z.strictObject({
    visited: z.array(z.string().min(1)).optional(),
    not_visited: z.array(z.string().min(1)).optional(),
  }),
]);

/** What a case's run must show. */
export const TestExpect = z.strictObject({
  status: z.enum(["completed", "failed", "canceled", "waiting"]).optional().describe("default: completed"),
  output: z.unknown().optional().describe(
    "a string: a JSONata expression over the output that must be true; any other value: what the output must equal",
  ),
  steps: ExpectSteps.optional(),
  tool_calls: z.array(ExpectToolCall).optional(),
  error: z.strictObject({ code: z.string().min(1) }).optional().describe("the run's (or step's) error code"),
  max_turns: z.int().min(1).optional(),
  max_tokens: z.int().min(1).optional(),
}).meta({ id: "TestExpect" });
export type TestExpect = z.infer<typeof TestExpect>;

const CaseFields = {
  name: z.string().min(1).describe("the case's name, unique in its file"),
  model: TestModel.optional(),
  mocks: z.record(z.string(), ToolMock).optional().describe("MCP tools replaced for this case, by tool name"),
  tools: z.literal("live").optional().describe("live: unmocked, unrecorded tools call the real servers"),
  approvals: z.record(z.string(), TestApproval).optional().describe("decisions by human_approval step id"),
  signals: z.array(TestDelivery).optional(),
  events: z.array(TestDelivery).optional(),
  expect: TestExpect.default({}),
  realtime: z.boolean().optional().describe("true: timers and timeouts take real time"),
  sandbox: z.literal("mock").optional().describe("mock: sandbox exec results are stubbed (no Docker)"),
  match: z.literal("loose").optional().describe("loose: a cassette replays even if the request changed"),
};

/** A case that runs one agent with a task and variables. */
export const AgentTestCase = z.strictObject({
  ...CaseFields,
  agent: z.string().min(1),
  task: z.string().min(1),
  vars: z.record(z.string(), z.unknown()).optional(),
}).meta({ id: "AgentTestCase" });

/** A case that runs one workflow with an input. */
export const WorkflowTestCase = z.strictObject({
  ...CaseFields,
  workflow: z.string().min(1),
  input: z.record(z.string(), z.unknown()).optional(),
}).meta({ id: "WorkflowTestCase" });

export const TestCase = z.union([AgentTestCase, WorkflowTestCase]).meta({ id: "TestCase" });
export type TestCase = z.infer<typeof TestCase>;

/** A test file: its cases. */
export const TestFile = z.strictObject({
  cases: z.array(TestCase).min(1),
}).meta({ id: "TestFile" });
export type TestFile = z.infer<typeof TestFile>;

/** The outcome of one case. */
export const CaseResult = z.looseObject({
  file: z.string(),
  name: z.string(),
  kind: z.enum(["agent", "workflow"]),
  target: z.string().describe("the agent or workflow it ran"),
  status: z.enum(["passed", "failed"]),
  duration_ms: z.number(),
  run_id: z.string().nullable(),
  clock_ms: z.number().nullable().describe(
    "the run's duration on the station's clock: with skipped time, the hours its timers waited",
  ),
  failures: z.array(z.object({ assertion: z.string(), message: z.string(), diff: z.string().optional() })),
  steps: z.array(z.string()).describe("the step ids the run took, in order"),
  recorded: z.boolean().optional().describe("stn test --update wrote its cassette again before this run"),
}).meta({ id: "TestCaseResult" });
export type CaseResult = z.infer<typeof CaseResult>;

/** Per workflow: the states and branches the suite exercised. */
export const WorkflowCoverage = z.looseObject({
  workflow: z.string(),
  states: z.array(z.string()),
  visited: z.array(z.string()),
  branches: z.array(z.string()).describe("`state→label` for switch cases, onReject/onTimeout, catch"),
  taken: z.array(z.string()),
  percent: z.number(),
}).meta({ id: "WorkflowCoverage" });
export type WorkflowCoverage = z.infer<typeof WorkflowCoverage>;

/** A mistake in a test file, at its line and column. */
export const TestFileIssue = z.object({
  code: z.string(),
  path: z.string().describe("JSON pointer into the file"),
  line: z.number().optional(),
  column: z.number().optional(),
  message: z.string(),
  hint: z.string().optional(),
}).meta({ id: "TestFileIssue" });

/** A test run: a suite run against the station, and its results. */
export const TestRun = z.looseObject({
  id: z.string(),
  environment: z.string(),
  status: z.enum(["running", "passed", "failed", "invalid"]),
  started_at: z.string(),
  finished_at: z.string().nullable(),
  duration_ms: z.number().nullable(),
  summary: z.looseObject({ total: z.number(), passed: z.number(), failed: z.number() }),
  cases: z.array(CaseResult),
  coverage: z.array(WorkflowCoverage),
  invalid: z.array(z.object({ file: z.string(), errors: z.array(TestFileIssue) })).describe(
    "test files that did not validate (the suite did not run)",
  ),
}).meta({ id: "TestRun" });
export type TestRun = z.infer<typeof TestRun>;

export const TestRunList = z.looseObject({ runs: z.array(TestRun) }).meta({ id: "TestRunList" });

/** POST /api/v1/tests */
export const StartTestRunBody = z.strictObject({
  environment: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/).optional().describe(
    "the environment under test (default: workflows.environment)",
  ),
  files: z.array(z.strictObject({ path: z.string().min(1), text: z.string() })).optional().describe(
    "test files and the cassettes they name, by path; default: the environment's tests/*.test.yaml",
  ),
  filter: z.string().optional().describe("only cases whose `file › name` contains this"),
  parallel: z.int().min(1).max(64).optional(),
  bail: z.boolean().optional().describe("stop at the first failing case"),
  wait: z.boolean().default(true).describe("answer when the run has finished (false: at once, poll the run)"),
}).meta({ id: "StartTestRunBody" });
export type StartTestRunBody = z.input<typeof StartTestRunBody>;

export const TestRunIdParam = z.object({ id: z.string().min(1) });
