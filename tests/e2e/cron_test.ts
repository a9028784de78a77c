import { join } from "node:path";
import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { createTestUser, shellQuote } from "../helpers/user.ts";

const README = Deno.readTextFileSync(new URL("../../README.md", import.meta.url));
/** The README's main-job line ("Two commands"), run verbatim. */
const MAIN_JOB = README.slice(README.indexOf("## Two commands")).split("\n").find((l) =>
  l.startsWith("scripts/stn ")
)!;
const SANDBOX_WORKFLOW = `id: needs-docker
states:
  - id: hello
    type: sandbox
    command: ["echo", "hi"]
    end: true
`;
const ESC = "\x1b";

Deno.test("cron and non-root users (issue 22): a user with cron's environment and no Docker access", async (t) => {
  assert(MAIN_JOB, "the README's Two commands section shows a scripts/stn line");
  const user = await createTestUser();
  try {
    await t.step(
      "the README's main-job line completes from cron, logs plain text, installs nothing",
      async () => {
        // As in a crontab: `cd <clone> && <line> >> ~/cron.log 2>&1`.
        const r = await user.sh(`${MAIN_JOB} >> "$HOME/cron.log" 2>&1`, {
          cwd: user.checkout,
          offline: true,
        });
        const log = Deno.readTextFileSync(join(user.home, "cron.log"));
        assertEquals(r.code, 0, log);
        assertStringIncludes(log, '"verdict": "page"');
        assert(!log.includes(ESC), `escape codes in the log:\n${log}`);
        // scripts/setup prints a `setup:` line for anything it installs or misses; it found everything.
        assert(!/^setup:/m.test(log) && !log.includes("apt"), `setup did something:\n${log}`);
        // Docker is there but this user may not use it: the workflow needs no sandbox, so not a word of it
        // (cron mails every line); a workflow that needs one fails with the fix (next step).
        assert(!log.includes("docker"), `a Docker warning for a run without sandbox steps:\n${log}`);
      },
    );

    await t.step("a workflow with a sandbox step fails with exit 1 and the docker-group hint", async () => {
      const file = join(user.home, "needs-docker.workflow.yaml");
      Deno.writeTextFileSync(file, SANDBOX_WORKFLOW);
      await Deno.chmod(file, 0o644);
      const r = await user.sh(`${shellQuote(join(user.checkout, "scripts/stn"))} workflow run ${file}`);
      assertEquals(r.code, 1, r.stderr);
      assertStringIncludes(r.stderr, "error: workflow needs-docker has sandbox steps");
      assertStringIncludes(
        r.stderr,
        `hint: add the user to the docker group (sudo usermod -aG docker ${user.name}`,
      );
      assert(!r.stderr.includes("    at "), "no stack trace");
    });

    await t.step(
      "`scripts/install` gives every user a `stn` that runs offline from the shared cache",
      async () => {
        const bin = join(user.home, "..", "bin");
        const install = new Deno.Command(join(user.checkout, "scripts/install"), {
          args: ["--system", "--bin-dir", bin, "--deno-dir", user.sharedDenoDir],
          stdout: "piped",
          stderr: "piped",
        });
        const out = await install.output();
        assertEquals(out.code, 0, new TextDecoder().decode(out.stderr));
        const r = await user.sh(`${shellQuote(join(bin, "stn"))} status`, { offline: true });
        assertEquals(r.code, 0, r.stderr);
        // cron's PATH lacks /usr/sbin; the runtime found nats-server there and says which it runs.
        assertStringIncludes(r.stdout, "/usr/sbin/nats-server");
      },
    );

    await t.step(
      "stn doctor names each missing piece and its fix when nats-server and Docker are hidden",
      async () => {
        const stn = shellQuote(join(user.checkout, "scripts/stn"));
        const text = await user.sh(`${stn} doctor`, { hideSbin: true });
        assertEquals(text.code, 1, text.stdout + text.stderr);
        assert(!text.stdout.includes(ESC));
        const line = (name: string) => text.stdout.split("\n").find((l) => l.includes(`  ${name}  `)) ?? "";
        assertStringIncludes(line("nats-server"), "FAIL");
        assertStringIncludes(
          line("nats-server"),
          "'nats-server' not found in /usr/bin, /bin, /usr/local/sbin",
        );
        assertStringIncludes(line("nats-server"), "/usr/sbin");
        assertStringIncludes(line("nats-server"), "fix: sudo apt-get install nats-server");
        assertStringIncludes(line("docker"), "warn");
        assertStringIncludes(line("docker"), "fix: add the user to the docker group");
        assertStringIncludes(line("deno"), "ok");
        // The launcher said so too, and still ran doctor rather than block it.
        assertStringIncludes(text.stderr, "setup: warning: nats-server is not installed");

        const json = await user.sh(`${stn} doctor --json`, { hideSbin: true });
        assertEquals(json.code, 1);
        // A failure under --json is the error object, with the report in its details (docs/cli.md).
        const { error } = JSON.parse(json.stdout) as {
          error: { code: string; details: { ok: boolean; checks: { name: string; status: string }[] } };
        };
        assertEquals(error.code, "doctor_failed");
        const report = error.details;
        const status = Object.fromEntries(report.checks.map((c) => [c.name, c.status]));
        assertEquals(report.ok, false);
        assertEquals([status["nats-server"], status.docker, status.STATION_HOME], ["fail", "warn", "ok"]);
      },
    );
  } finally {
    await user.cleanup();
  }
});
