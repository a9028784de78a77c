import { join } from "node:path";

/**
 * Where Debian/Ubuntu, Homebrew and per-user installs put programs. Searched after $PATH, because
 * cron runs commands with PATH=/usr/bin:/bin while Debian installs nats-server and dockerd in
 * /usr/sbin (issue 22).
 */
export const PROGRAM_DIRS = [
  "/usr/local/sbin",
  "/usr/local/bin",
  "/usr/sbin",
  "/usr/bin",
  "/sbin",
  "/bin",
  "/opt/homebrew/bin",
  "/home/linuxbrew/.linuxbrew/bin",
  "/snap/bin",
];

export interface FindProgramOptions {
  env?: Record<string, string | undefined>;
  /** Directories searched after PATH (default PROGRAM_DIRS and ~/.local/bin). */
  dirs?: string[];
}

function isExecutableFile(path: string): boolean {
  try {
    const info = Deno.statSync(path);
    return info.isFile && info.mode !== null && (info.mode & 0o111) !== 0;
  } catch {
    return false;
  }
}

/** The directories findProgram searches, in order: $PATH, then the standard install locations. */
export function programSearchDirs(options: FindProgramOptions = {}): string[] {
  const env = options.env ?? Deno.env.toObject();
  const extra = options.dirs ?? [...PROGRAM_DIRS, ...(env.HOME ? [join(env.HOME, ".local", "bin")] : [])];
  const fromPath = (env.PATH ?? "").split(":").filter((d) => d !== "");
  return [...new Set([...fromPath, ...extra])];
}

/**
 * The absolute path of a program: a name is looked up on $PATH and then in the standard install
 * directories; a path (containing "/") is taken as it is. Undefined when nothing executable is there.
 */
export function findProgram(nameOrPath: string, options: FindProgramOptions = {}): string | undefined {
  if (nameOrPath.includes("/")) return isExecutableFile(nameOrPath) ? nameOrPath : undefined;
  for (const dir of programSearchDirs(options)) {
    const candidate = join(dir, nameOrPath);
    if (isExecutableFile(candidate)) return candidate;
  }
  return undefined;
}
