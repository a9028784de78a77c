/**
 * Finds the processes tests leave behind: every process whose command line, working directory or
 * environment mentions a path — a test's home, or the temp dir scripts/test gives one run of the suite
 * (every process a test starts inherits it as TMPDIR). tests/helpers/home.ts stops those of a home when
 * its test ends (a station killed by SIGKILL leaves its managed nats-server running); scripts/test runs
 * this file on its run's dir at the end, lists what survived, stops it and fails.
 *
 *   deno run -A scripts/lib/processes.ts DIR [GRACE_S]   exits 1 naming (and then stopping) every process of
 *                                                        DIR still alive after GRACE_S seconds (default 10)
 */
import { isAlive } from "../../src/lib/process_alive.ts";
import { sleep } from "../../src/lib/async.ts";

/** A process as `ps -o pid,ppid,args` shows it. */
export interface ProcessInfo {
  pid: number;
  ppid: number;
  args: string;
}

function read(path: string): string {
  try {
    return new TextDecoder().decode(Deno.readFileSync(path));
  } catch {
    return ""; // gone, or another user's
  }
}

function parentOf(pid: number): number {
  // "pid (comm) state ppid …": comm may hold spaces and parentheses, so read after the last ')'.
  const stat = read(`/proc/${pid}/stat`);
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1] ?? 0);
}

/** This process and its ancestors: never reported, never stopped. */
function ownLine(): Set<number> {
  const own = new Set<number>();
  for (let pid = Deno.pid; pid > 1 && !own.has(pid); pid = parentOf(pid)) own.add(pid);
  return own;
}

/** Whether text names path itself or something below it (not a longer name that starts with it). */
function mentions(text: string, path: string): boolean {
  for (let at = text.indexOf(path); at >= 0; at = text.indexOf(path, at + 1)) {
    if (["/", "\0", " ", "\n", undefined].includes(text[at + path.length])) return true;
  }
  return false;
}

/** Live processes (not this one nor its ancestors) whose command line, cwd or environment mention `path`. */
export function processesOf(path: string): ProcessInfo[] {
  const own = ownLine();
  const found: ProcessInfo[] = [];
  for (const entry of Deno.readDirSync("/proc")) {
    const pid = Number(entry.name);
    if (!Number.isInteger(pid) || own.has(pid)) continue;
    let cwd = "";
    try {
      cwd = Deno.readLinkSync(`/proc/${pid}/cwd`);
    } catch { /* gone, or another user's */ }
    const cmdline = read(`/proc/${pid}/cmdline`);
    if (![cmdline, cwd, read(`/proc/${pid}/environ`)].some((s) => mentions(s, path))) continue;
    if (!isAlive(pid)) continue;
    found.push({ pid, ppid: parentOf(pid), args: cmdline.replaceAll("\0", " ").trim() });
  }
  return found;
}

/** Kills every process of `path` (SIGKILL: its test is over) and waits until they are gone; returns any left. */
export async function stopProcessesOf(path: string, timeoutMs = 5_000): Promise<ProcessInfo[]> {
  const deadline = Date.now() + timeoutMs;
  let left = processesOf(path);
  while (left.length > 0 && Date.now() < deadline) {
    for (const p of left) {
      try {
        Deno.kill(p.pid, "SIGKILL");
      } catch { /* already gone */ }
    }
    await sleep(50);
    left = left.filter((p) => isAlive(p.pid));
  }
  return left;
}

/** The processes of `path` still alive after waiting up to `graceMs` for them to end on their own. */
export async function survivorsOf(path: string, graceMs: number): Promise<ProcessInfo[]> {
  const deadline = Date.now() + graceMs;
  let left = processesOf(path);
  while (left.length > 0 && Date.now() < deadline) {
    await sleep(200);
    left = processesOf(path);
  }
  return left;
}

if (import.meta.main) {
  const [dir, grace = "10"] = Deno.args;
  if (!dir || !/^\d+$/.test(grace)) {
    console.error("usage: processes.ts DIR [GRACE_SECONDS]");
    Deno.exit(2);
  }
  // Processes a test stopped may take a moment to end on a loaded machine.
  const survivors = await survivorsOf(dir, Number(grace) * 1000);
  if (survivors.length > 0) {
    console.error(`${survivors.length} process(es) started by the tests outlived them (now stopped):`);
    for (const p of survivors) console.error(`  pid ${p.pid} (parent ${p.ppid}): ${p.args}`);
    const left = await stopProcessesOf(dir);
    for (const p of left) console.error(`  pid ${p.pid} could not be stopped`);
    Deno.exit(1);
  }
}
