import { join } from "node:path";
import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { runStn, startServe } from "../helpers/stn.ts";

/**
 * Issue 27 item 6: what stn creates under STATION_HOME is its user's only (folders 0700, files 0600),
 * whatever the umask; a home that exists already is never changed, only warned about by `stn doctor`.
 * A real second OS user (made with useradd, removed after) tries to read the ledger.
 */

const mode = (path: string) => Deno.statSync(path).mode! & 0o777;
const octal = (m: number) => m.toString(8).padStart(4, "0");

/** Runs `sh -c command` as `user`: its exit code and output. */
async function runAs(user: string, command: string): Promise<{ code: number; output: string }> {
  const out = await new Deno.Command("su", { args: [user, "-s", "/bin/sh", "-c", command] }).output();
  const dec = new TextDecoder();
  return { code: out.code, output: dec.decode(out.stdout) + dec.decode(out.stderr) };
}

/** A throwaway OS user without a home directory; removed by the returned function. */
async function addUser(): Promise<{ name: string; remove(): Promise<void> }> {
  const name = `stnprobe${Math.floor(Math.random() * 1e6)}`;
  const added = await new Deno.Command("useradd", { args: ["-M", "-s", "/bin/sh", name], stderr: "piped" })
    .output();
  assertEquals(added.code, 0, new TextDecoder().decode(added.stderr));
  return {
    name,
    remove: async () => {
      await new Deno.Command("userdel", { args: [name] }).output();
    },
  };
}

Deno.test("private files: stn serve under umask 022 makes its home, ledger, WAL and NATS store private; another user cannot read them", async () => {
  // The parent lets everyone in (0755), as a user's home directory or /var/lib does: only the
  // modes stn gives what it creates keep the other user out.
  const parent = await Deno.makeTempDir({ prefix: "stn-private-" });
  Deno.chmodSync(parent, 0o755);
  const home = join(parent, "station");
  const serve = await startServe({
    home,
    env: { STATION_HOME: home, NO_COLOR: "1", STN_SANDBOX_ENABLED: "false" },
    umask: "022",
  });
  const probe = await addUser();
  try {
    // A workflow run writes to the ledger, so its WAL and shared memory exist now.
    const run = await fetch(`${serve.url}/api/v1/workflow-runs`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        definition: { id: "secret", states: [{ id: "a", type: "inject", data: { token: "s3cret" } }] },
        input: { password: "hunter2" },
      }),
    });
    assertEquals(run.status, 201, await run.text());

    const db = join(home, "stn.db");
    const expected: [string, number][] = [
      [home, 0o700],
      [db, 0o600],
      [`${db}-wal`, 0o600],
      [`${db}-shm`, 0o600],
      [join(home, "nats"), 0o700],
      [join(home, "run"), 0o700],
      [join(home, "run", "server.json"), 0o600],
      [join(home, "run", "nats.conf"), 0o600],
      [join(home, "run", "nats.pid"), 0o600],
    ];
    assertEquals(
      expected.map(([p]) => [p, octal(mode(p))]),
      expected.map(([p, m]) => [p, octal(m)]),
    );

    // The probe works: the other user reads a world-readable file in the same folder...
    const control = join(parent, "readable.txt");
    Deno.writeTextFileSync(control, "anyone\n", { mode: 0o644 });
    Deno.chmodSync(control, 0o644);
    const seen = await runAs(probe.name, `cat ${control}`);
    assertEquals([seen.code, seen.output], [0, "anyone\n"]);
    // ...and cannot read the ledger, its WAL, or list the home.
    for (const target of [db, `${db}-wal`, home]) {
      const r = await runAs(probe.name, `cat ${target} > /dev/null || ls ${target}`);
      assert(r.code !== 0, `${probe.name} could read ${target}`);
      assertStringIncludes(r.output, "Permission denied");
    }
  } finally {
    await probe.remove();
    await serve.stop();
    await Deno.remove(parent, { recursive: true });
  }
});

Deno.test("private files: stn doctor warns about a home and ledger others can read, and changes neither", async () => {
  const home = await Deno.makeTempDir({ prefix: "stn-open-home-" });
  try {
    // Made before, by someone else's rules: 0755 and 0644.
    Deno.chmodSync(home, 0o755);
    const db = join(home, "stn.db");
    Deno.writeFileSync(db, new Uint8Array(), { mode: 0o644 });
    Deno.chmodSync(db, 0o644);
    const env = { STATION_HOME: home, NO_COLOR: "1", STN_SANDBOX_ENABLED: "false" };

    const r = await runStn(["--json", "doctor"], { env });
    const report = JSON.parse(r.stdout || JSON.stringify(JSON.parse(r.stderr).error.details));
    const check = report.checks.find((c: { name: string }) => c.name === "permissions");
    assertEquals(check?.status, "warn", JSON.stringify(report.checks));
    assertStringIncludes(check.detail, `${home} is 0755`);
    assertStringIncludes(check.detail, `${db} is 0644`);
    assertEquals(check.fix, `chmod 700 ${home} && chmod 600 ${db}*`);
    assertEquals([octal(mode(home)), octal(mode(db))], ["0755", "0644"], "doctor changed nothing");

    // The text form: one line with its fix.
    const text = await runStn(["doctor"], { env });
    const line = text.stdout.split("\n").find((l) => l.includes("permissions"));
    assertStringIncludes(line ?? "", `fix: chmod 700 ${home}`);

    // Followed, the fix clears the warning.
    Deno.chmodSync(home, 0o700);
    Deno.chmodSync(db, 0o600);
    const again = await runStn(["--json", "doctor"], { env });
    const after = JSON.parse(again.stdout || JSON.stringify(JSON.parse(again.stderr).error.details));
    assertEquals(after.checks.find((c: { name: string }) => c.name === "permissions")?.status, "ok");
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});
