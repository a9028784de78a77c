import { join } from "node:path";

/** Writes an environment's files (path → text) under a station home's environments/<env>/. */
export async function writeEnvironment(
  home: string,
  files: Record<string, string>,
  env = "default",
): Promise<string> {
  const dir = join(home, "environments", env);
  for (const [path, text] of Object.entries(files)) {
    await Deno.mkdir(join(dir, path, ".."), { recursive: true });
    await Deno.writeTextFile(join(dir, path), text);
  }
  return dir;
}

/** A workflow with a switch on `n` (> 10: big, else small), an approval with onReject, and no model. */
export const ROUTE_WORKFLOW = `id: route
inputSchema: { type: object, properties: { n: { type: number } } }
states:
  - id: pick
    type: switch
    conditions:
      - if: $.workflow.input.n > 10
        next: big
    defaultNext: small
  - id: big
    type: inject
    data: { size: big }
    next: check
  - id: small
    type: inject
    data: { size: small }
    end: true
  - id: check
    type: human_approval
    message: ship it?
    timeout: 72h
    onReject: rejected
    next: shipped
  - id: shipped
    type: inject
    data: { shipped: true }
    end: true
  - id: rejected
    type: inject
    data: { shipped: false }
    end: true
`;

/** A workflow that waits a day, then gives an approver three days; a timeout goes to `late`. */
export const SLOW_WORKFLOW = `id: slow
states:
  - id: wait-a-day
    type: timer
    duration: 24h
    next: ask
  - id: ask
    type: human_approval
    message: still wanted?
    timeout: 72h
    onTimeout: late
    next: done
  - id: done
    type: inject
    data: { answer: approved }
    end: true
  - id: late
    type: inject
    data: { answer: timed out }
    end: true
`;
