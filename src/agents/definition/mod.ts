/** Agent definitions: `.prompt` files loaded, checked and normalised into AgentDefinition. */
export {
  agentNameFromFile,
  DEFAULT_MAX_STEPS,
  DEFAULT_TIMEOUT_MS,
  parseAgent,
  type ParsedAgent,
  type ParseOptions,
  PROMPT_FILE,
} from "./load.ts";
export {
  firstProblem,
  type FolderOptions,
  type InvalidAgentFile,
  invalidAgentFiles,
  loadAgentFiles,
  loadAgentsFolder,
  promptFiles,
} from "./folder.ts";
export { checkReferences, type ReferenceOptions } from "./references.ts";
