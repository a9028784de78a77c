import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
/** What a fresh clone needs to run stn (tests, docs and caches are left out). */
const CHECKOUT_PARTS = ["main.ts", "deno.json", "deno.lock", "src", "scripts", "examples", "docs"];
/** Cron runs jobs with this PATH (and little else in the environment). */
export const CRON_PATH = "/usr/bin:/bin";

export interface UserRun {
  code: number;
  stdout: string;
  stderr: string;
}

export interface UserShOptions {
  cwd?: string;
  env?: Record<string, string>;
  /** Run where /usr/sbin is empty (a private mount namespace): no nats-server, no dockerd. */
  hideSbin?: boolean;
  /** Run without network (a private network namespace with loopback only): proves "offline". */
  offline?: boolean;
}

/**
 * A throwaway Unix user for tests that must not run as root: it owns only its home, is in no extra
 * group (so not in `docker`), and reads a root-owned copy of this checkout and a root-owned copy of
 * stn's npm packages (nothing of root's own is opened up to it).
 */
export interface TestUser {
  name: string;
  home: string;
  /** A read-only (root-owned, world-readable) copy of this checkout: a fresh clone. */
  checkout: string;
  /** A read-only Deno cache holding stn's packages, as `sudo scripts/install` makes one. */
  sharedDenoDir: string;
  /**
   * Runs a shell line as the user with cron's environment (`env -i HOME PATH=/usr/bin:/bin`, no TTY,
   * stdin /dev/null).
   */
  sh(line: string, options?: UserShOptions): Promise<UserRun>;
  cleanup(): Promise<void>;
}

async function run(cmd: string, args: string[]): Promise<UserRun> {
  const out = await new Deno.Command(cmd, { args, stdin: "null", stdout: "piped", stderr: "piped" }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

async function must(cmd: string, args: string[]): Promise<string> {
  const r = await run(cmd, args);
  if (r.code !== 0) throw new Error(`${cmd} ${args.join(" ")} exited ${r.code}: ${r.stderr}`);
  return r.stdout;
}

/** Single-quotes a value for sh. */
export function shellQuote(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

/** Creates the user, its home, the checkout copy and the package cache; needs root. */
export async function createTestUser(): Promise<TestUser> {
  if (Deno.uid() !== 0) {
    throw new Error(
      "this test creates a Unix user (useradd) and must run as root, as the test suite does in CI",
    );
  }
  const base = await Deno.makeTempDir({ prefix: "stn-user-" });
  await Deno.chmod(base, 0o755);
  const name = `stn-t${crypto.randomUUID().slice(0, 8)}`;
  const home = join(base, "home");
  const checkout = join(base, "checkout");
  const sharedDenoDir = join(base, "deno");
  await must("useradd", ["--no-create-home", "--home-dir", home, "--shell", "/bin/sh", "--user-group", name]);
  try {
    await Deno.mkdir(home, { mode: 0o700 });
    await Deno.mkdir(checkout);
    for (const part of CHECKOUT_PARTS) await must("cp", ["-r", join(ROOT, part), checkout]);
    // Root's Deno cache stays private: the user gets a copy of the npm packages stn uses.
    const info = JSON.parse(await must(Deno.execPath(), ["info", "--json"]));
    await Deno.mkdir(sharedDenoDir);
    await must("cp", ["-r", info.npmCache, join(sharedDenoDir, "npm")]);
    await must("chmod", ["-R", "a+rX,go-w", checkout, sharedDenoDir]);
    // The user's own Deno dir (for its caches) reads the packages from the shared copy.
    await Deno.mkdir(join(home, ".cache", "deno"), { recursive: true });
    await Deno.symlink(join(sharedDenoDir, "npm"), join(home, ".cache", "deno", "npm"));
    await must("chown", ["-R", `${name}:${name}`, home]);
  } catch (err) {
    await run("userdel", [name]);
    await Deno.remove(base, { recursive: true }).catch(() => {});
    throw err;
  }
  const [uid, gid] = await Promise.all([must("id", ["-u", name]), must("id", ["-g", name])]);
  return {
    name,
    home,
    checkout,
    sharedDenoDir,
    sh: (line, options = {}) => {
      const env = { HOME: home, PATH: CRON_PATH, ...options.env };
      const userShell = `cd ${shellQuote(options.cwd ?? home)} && ${line}`;
      const asUser = [
        "/usr/bin/setpriv",
        `--reuid=${uid.trim()}`,
        `--regid=${gid.trim()}`,
        "--init-groups",
        "--",
        "/usr/bin/env",
        "-i",
        ...Object.entries(env).map(([k, v]) => `${k}=${v}`),
        "/bin/sh",
        "-c",
        userShell,
      ];
      if (!options.hideSbin && !options.offline) return run(asUser[0], asUser.slice(1));
      // Private namespaces: what they change is seen by this command only.
      const empty = join(base, "empty");
      const prelude = [
        ...(options.offline ? ["/usr/sbin/ip link set lo up"] : []),
        ...(options.hideSbin
          ? [`mkdir -p ${shellQuote(empty)}`, `mount --bind ${shellQuote(empty)} /usr/sbin`]
          : []),
      ];
      return run("/usr/bin/unshare", [
        ...(options.hideSbin ? ["--mount", "--propagation", "private"] : []),
        ...(options.offline ? ["--net"] : []),
        "/bin/sh",
        "-c",
        `${prelude.join(" && ")} && exec "$@"`,
        "sh",
        ...asUser,
      ]);
    },
    cleanup: async () => {
      await run("userdel", [name]);
      await Deno.remove(base, { recursive: true }).catch(() => {});
    },
  };
}
