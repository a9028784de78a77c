import { basename } from "node:path";

// Apart from load.ts so that listing an environment's files does not load the validator (Ajv, JSONata).

/** Definition file names: `<id>.workflow.yaml|yml|json` (plain `.yaml`/`.yml`/`.json` accepted by path). */
export const WORKFLOW_FILE = /\.workflow\.(ya?ml|json)$/;

/** The workflow id a file name implies (`deploy.workflow.yaml` → `deploy`), if it names a valid one. */
export function idFromFileName(path: string): string | undefined {
  const name = basename(path).replace(WORKFLOW_FILE, "").replace(/\.(ya?ml|json)$/, "");
  return /^[a-z0-9][a-z0-9_-]*$/.test(name) ? name : undefined;
}
