import assert from "node:assert/strict";
import { join } from "node:path";
import { tempHome } from "../helpers/home.ts";
import { runStn, type ServeProcess, startServe, waitFor } from "../helpers/stn.ts";
import { removeStationContainers, SANDBOX_CONFIG } from "../sandbox/backend.ts";

/** config.yaml: short lifetimes and a fast reaper, so expiry happens within the test. */
const lifecycleConfig = (interval: string, extra = "") =>
  `${SANDBOX_CONFIG}storage:
  session_ttl: 1s
  run_output_ttl: 2s
  cleanup:
    interval: ${interval}
${extra}`;

async function api(serve: ServeProcess, method: string, path: string, body?: unknown): Promise<Response> {
  return await fetch(`${serve.url}${path}`, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

async function jsonOf(res: Response, status: number): Promise<Record<string, unknown>> {
  const text = await res.text();
  assert.equal(res.status, status, text);
  return JSON.parse(text);
}

/** Opens a sandbox holding out.txt. */
async function sandboxWithFile(serve: ServeProcess, body: Record<string, unknown>): Promise<string> {
  const id = (await jsonOf(await api(serve, "POST", "/api/v1/sandboxes", body), 201)).sandbox_id as string;
  const put = await fetch(`${serve.url}/api/v1/sandboxes/${id}/files/out.txt`, {
    method: "PUT",
    body: "hello",
  });
  await jsonOf(put, 200);
  return id;
}

const status = async (serve: ServeProcess, key: string) => {
  const res = await fetch(`${serve.url}/api/v1/files/${key}?info`);
  await res.body?.cancel();
  return res.status;
};

/** A counter's value in the /metrics text (0 when absent). */
async function counter(serve: ServeProcess, name: string): Promise<number> {
  const text = await (await fetch(`${serve.url}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith(`${name} `));
  return line ? Number(line.split(" ")[1]) : 0;
}

Deno.test("file lifecycle: session files go with their session, run outputs expire, pinned files stay, reaped across a restart", async (t) => {
  const home = await tempHome();
  home.writeConfig(lifecycleConfig("300ms"));
  let serve = await startServe({ home: home.home, env: home.env });
  try {
    await t.step(
      "a file published to sessions/<id>/ is served until the session closes, then 404",
      async () => {
        const id = await sandboxWithFile(serve, {});
        const published = await jsonOf(
          await api(serve, "POST", `/api/v1/sandboxes/${id}/publish`, { source: "out.txt" }),
          201,
        );
        const key = published.file_key as string;
        assert.equal(key, `sessions/${id}/out.txt`);
        const info = await jsonOf(await fetch(`${serve.url}/api/v1/files/${key}?info`), 200);
        assert.equal(info.expires_at, null, "no expiry while the session is open");
        assert.equal(info.expires_with_session, id);
        const list = await runStn(["files", "list", "--prefix", "sessions/"], { env: home.env });
        assert.match(list.stdout, new RegExp(`with ${id}`), list.stdout);

        // A pinned publish from the same session stays.
        const pinned = await jsonOf(
          await api(serve, "POST", `/api/v1/sandboxes/${id}/publish`, {
            source: "out.txt",
            file_key: `sessions/${id}/kept.txt`,
            ttl: "0",
          }),
          201,
        );
        assert.equal((pinned.file as Record<string, unknown>).expires_with_session, null);

        await jsonOf(await api(serve, "DELETE", `/api/v1/sandboxes/${id}`), 200);
        assert.ok(
          await waitFor(async () => await status(serve, key) === 404, 30_000),
          "gone after the close + 1s",
        );
        assert.equal(await status(serve, `sessions/${id}/kept.txt`), 200, "the pinned file stays");
      },
    );

    await t.step("a run output lives storage.run_output_ttl (2s), then the reaper deletes it", async () => {
      const id = await sandboxWithFile(serve, { scope: "workflow", run_id: "run_lifecycle" });
      const out = await runStn(["sandbox", "publish", id, "out.txt", "--json"], { env: home.env });
      assert.equal(out.code, 0, out.stderr);
      const published = JSON.parse(out.stdout);
      assert.equal(published.file_key, "runs/run_lifecycle/output/out.txt");
      assert.ok(published.file.expires_at, "a run output has an expiry");
      const keep = await runStn(
        [
          "sandbox",
          "publish",
          id,
          "out.txt",
          "--key",
          "runs/run_lifecycle/output/keep.txt",
          "--keep",
          "--json",
        ],
        { env: home.env },
      );
      assert.equal(keep.code, 0, keep.stderr);
      assert.equal(JSON.parse(keep.stdout).file.expires_at, null);

      const before = await counter(serve, "stn_files_reaped_total");
      assert.ok(
        await waitFor(async () => await status(serve, published.file_key) === 404, 30_000),
        "the run output expires",
      );
      // The reaper deleted the object (not just hid it): its counter moved and prune finds nothing left.
      assert.ok(await waitFor(async () => await counter(serve, "stn_files_reaped_total") > before, 30_000));
      assert.ok(await counter(serve, "stn_files_reaped_bytes_total") >= 5);
      const dry = await runStn(["files", "prune", "--dry-run", "--json"], { env: home.env });
      assert.equal(dry.code, 0, dry.stderr);
      assert.equal(JSON.parse(dry.stdout).count, 0, dry.stdout);
      assert.equal(await status(serve, "runs/run_lifecycle/output/keep.txt"), 200, "the pinned output stays");
    });

    await t.step("an expired file is reaped by the next start after a kill -9", async () => {
      const src = join(home.home, "short.txt");
      await Deno.writeTextFile(src, "short-lived");
      const up = await runStn(["files", "upload", src, "--key", "files/short.txt", "--ttl", "3s", "--json"], {
        env: home.env,
      });
      assert.equal(up.code, 0, up.stderr);
      const expiresAt = Date.parse(JSON.parse(up.stdout).expires_at);
      await serve.stop("SIGKILL");
      // Let it expire while no station runs; the restarted one's timer is an hour, so only its start sweep reaps.
      await waitFor(() => Date.now() > expiresAt + 100, 30_000);
      home.writeConfig(lifecycleConfig("1h"));
      serve = await startServe({ home: home.home, env: home.env });
      assert.ok(await waitFor(async () => await counter(serve, "stn_files_reaped_total") >= 1, 30_000));
      assert.equal(await status(serve, "files/short.txt"), 404);
      assert.equal(await status(serve, "runs/run_lifecycle/output/keep.txt"), 200);
    });

    await t.step("stn files prune [--dry-run] lists, then deletes, what expired", async () => {
      const src = join(home.home, "prune.txt");
      await Deno.writeTextFile(src, "prune me");
      const up = await runStn(["files", "upload", src, "--key", "files/prune.txt", "--ttl", "1s", "--json"], {
        env: home.env,
      });
      assert.equal(up.code, 0, up.stderr);
      const expiresAt = Date.parse(JSON.parse(up.stdout).expires_at);
      await waitFor(() => Date.now() > expiresAt + 100, 30_000);
      const dry = await runStn(["files", "prune", "--dry-run"], { env: home.env });
      assert.equal(dry.code, 0, dry.stderr);
      assert.match(dry.stdout, /files\/prune\.txt/);
      assert.match(dry.stdout, /Would delete 1 expired file/);
      const real = await runStn(["files", "prune", "--json"], { env: home.env });
      assert.equal(real.code, 0, real.stderr);
      assert.deepEqual(JSON.parse(real.stdout).files.map((f: { key: string }) => f.key), ["files/prune.txt"]);
      const again = await runStn(["files", "prune", "--json"], { env: home.env });
      assert.equal(JSON.parse(again.stdout).count, 0, "prune is idempotent");
    });
  } finally {
    await serve.stop();
    await removeStationContainers(join(home.home, "stn.db"));
    await home.cleanup();
  }
});

Deno.test("file store near its quota: a warning in the log, /health and stn doctor before uploads fail", async () => {
  const home = await tempHome();
  home.writeConfig(`storage:\n  max_total_bytes: 2097152\n  quota_warning: 0.5\n`);
  const serve = await startServe({ home: home.home, env: home.env });
  try {
    const health = await jsonOf(await fetch(`${serve.url}/health`), 200);
    assert.equal((health.storage as Record<string, unknown>).status, "ok");
    const src = join(home.home, "big.bin");
    await Deno.writeFile(src, new Uint8Array(1_200_000));
    const up = await runStn(["files", "upload", src], { env: home.env });
    assert.equal(up.code, 0, up.stderr);
    // The next upload's check (or the reaper's) sees the bucket past half full.
    const small = join(home.home, "small.txt");
    await Deno.writeTextFile(small, "x");
    assert.equal((await runStn(["files", "upload", small], { env: home.env })).code, 0);
    const storage = (await jsonOf(await fetch(`${serve.url}/health`), 200)).storage as Record<
      string,
      unknown
    >;
    assert.equal(storage.status, "near_full", JSON.stringify(storage));
    assert.match(String(storage.warning), /stn files prune/);
    assert.ok(await waitFor(() => /file store is nearly full/.test(serve.stderr()), 10_000), serve.stderr());
    const doctor = await runStn(["doctor", "--json"], { env: home.env });
    const check = JSON.parse(doctor.stdout).checks.find((c: { name: string }) => c.name === "file store");
    assert.equal(check?.status, "warn", doctor.stdout);
    assert.match(check.fix, /stn files prune/);
  } finally {
    await serve.stop();
    await home.cleanup();
  }
});
