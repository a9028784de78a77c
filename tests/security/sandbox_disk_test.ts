import assert from "node:assert/strict";
import { tempHome } from "../helpers/home.ts";
import { startServe } from "../helpers/stn.ts";
import {
  labelledVolumes,
  removeStationContainers,
  sandboxConfig,
  stationIdOf,
  testBackend,
  testInBothModes,
  testLabels,
} from "../sandbox/backend.ts";
import { BUSYBOX } from "../sandbox/images.ts";
import { request } from "./sandbox_helpers.ts";

const MiB = 1024 * 1024;

interface Result {
  exit_code: number;
  stdout: string;
  stderr: string;
}

testInBothModes(
  "security: a sandbox cannot fill the disk — dd past sandbox.disk_mb fails inside it, an upload past it is 507 sandbox_disk_full, and the sandbox goes on working",
  async (mode) => {
    const home = await tempHome();
    home.writeConfig(`${sandboxConfig(mode)}  disk_mb: 16\n  tmp_mb: 8\n  max_file_size: ${32 * MiB}\n`);
    const serve = await startServe({ home: home.home, env: home.env });
    const api = `${serve.url}/api/v1`;
    const call = async (method: string, path: string, body?: unknown) => {
      const out = await request(`${api}${path}`, undefined, {
        method,
        ...(body instanceof Uint8Array
          ? { body: body as BodyInit }
          : body === undefined
          ? {}
          : { headers: { "content-type": "application/json" }, body: JSON.stringify(body) }),
      });
      return { ...out, json: out.body ? JSON.parse(new TextDecoder().decode(out.body)) : undefined };
    };
    const ok = async (method: string, path: string, body?: unknown) => {
      const out = await call(method, path, body);
      assert.ok(out.status < 300, `${method} ${path}: ${out.status} ${out.code} ${out.message}`);
      return out.json;
    };
    try {
      const station = { "dev.stn.station": (await stationIdOf(home.path("stn.db")))! };
      const { sandbox_id: id } = await ok("POST", "/sandboxes", {});
      const exec = (cmd: string): Promise<Result> => ok("POST", `/sandboxes/${id}/exec`, { cmd });

      // A command writing past the quota fails itself, with ENOSPC on its stderr.
      const dd = await exec("dd if=/dev/zero of=big bs=1M count=64");
      assert.notEqual(dd.exit_code, 0);
      assert.match(dd.stderr, /No space left on device/);
      assert.equal((await exec("stat -c %s big")).stdout.trim(), String(16 * MiB));
      const tmp = await exec("dd if=/dev/zero of=/tmp/big bs=1M count=64");
      assert.notEqual(tmp.exit_code, 0);
      assert.match(tmp.stderr, /No space left on device/);
      // Everywhere else the root filesystem is read-only (the container's writable layer takes nothing;
      // the kernel says so before it looks at permissions).
      for (const elsewhere of ["/big", "/etc/big", "/bin/big"]) {
        const res = await exec(`dd if=/dev/zero of=${elsewhere} bs=1M count=1`);
        assert.notEqual(res.exit_code, 0, elsewhere);
        assert.match(res.stderr, /Read-only file system/, elsewhere);
      }
      // PID 1's stdout leads nowhere on the host (a container log would grow without bound).
      assert.equal((await exec("head -c 4194304 /dev/zero > /proc/1/fd/1; echo sent")).stdout, "sent\n");
      const [container] = await testBackend().listManaged({ "dev.stn.session": id });
      const info = await testBackend().docker.getContainer(container.id).inspect();
      assert.equal(info.HostConfig.LogConfig?.Type, "none");
      assert.equal(info.LogPath, "");

      await exec("rm big /tmp/big");
      // Through the API: an upload and a staged file past the quota are refused with the catalogue's code.
      const big = new Uint8Array(24 * MiB).fill(7);
      const upload = await call("PUT", `/sandboxes/${id}/files/up.bin`, big);
      assert.deepEqual([upload.status, upload.code], [507, "sandbox_disk_full"], upload.message);
      assert.match(upload.message!, /sandbox\.disk_mb: 16 MiB/);
      assert.equal((await ok("PUT", "/files/disk/big.bin", big)).size_bytes, big.length);
      const staged = await call("POST", `/sandboxes/${id}/stage`, {
        file_key: "disk/big.bin",
        destination: "staged.bin",
      });
      assert.deepEqual([staged.status, staged.code], [507, "sandbox_disk_full"], staged.message);
      // Nothing half-written is left, and the server is healthy.
      assert.deepEqual((await ok("GET", `/sandboxes/${id}/files?recursive=1`)).entries, []);
      assert.equal((await request(`${serve.url}/health`, undefined)).status, 200);

      // The sandbox goes on: a file that fits is written, read and run.
      const small = new TextEncoder().encode("echo still here\n");
      await ok("PUT", `/sandboxes/${id}/files/small.sh`, small);
      assert.equal((await exec("sh small.sh")).stdout, "still here\n");
      const filled = await exec("dd if=/dev/zero of=fill bs=1M count=64 2>/dev/null; rm fill; echo ok");
      assert.equal(filled.stdout, "ok\n");
      await ok("PUT", `/sandboxes/${id}/files/after.bin`, new Uint8Array(8 * MiB));

      // Its volume (the supervisor's) goes with it; so does a compute-mode run's.
      assert.equal((await labelledVolumes({ ...station, "dev.stn.session": id })).length, 1);
      await ok("DELETE", `/sandboxes/${id}`);
      const run = await ok("POST", "/sandbox/run", { code: "dd if=/dev/zero of=big bs=1M count=64" });
      assert.notEqual(run.exit_code, 0);
      assert.match(run.stderr, /No space left on device/);
      assert.deepEqual(await labelledVolumes(station), []);
    } finally {
      await serve.stop();
      await removeStationContainers(home.path("stn.db"));
      await home.cleanup();
    }
  },
);

Deno.test("security: a VOLUME the image declares is an empty read-only directory, not a way onto the host's disk", async () => {
  const backend = testBackend();
  const docker = backend.docker;
  // An image whose /data is a volume the sandbox user owns: Docker would make it a writable host directory.
  const image = `stn-test/volume:${crypto.randomUUID().slice(0, 8)}`;
  const base = await docker.createContainer({
    Image: BUSYBOX,
    User: "0",
    Cmd: ["sh", "-c", "mkdir /data && chown 1000:1000 /data"],
  });
  await base.start();
  await base.wait();
  const [repo, tag] = image.split(":");
  await base.commit({ repo, tag, changes: "VOLUME /data" });
  await base.remove({ v: true });
  const labels = testLabels("image_volume");
  try {
    const id = await backend.create({ image, network: false, labels });
    try {
      const exec = (cmd: string) => backend.exec(id, { cmd, timeoutMs: 30_000, maxOutputBytes: 4096 });
      const dd = await exec("dd if=/dev/zero of=/data/big bs=1M count=8");
      assert.notEqual(dd.exit_code, 0);
      assert.match(dd.stderr, /Read-only file system/);
      assert.equal((await exec("ls -A /data")).stdout, "");
      const info = await docker.getContainer(id).inspect();
      assert.deepEqual(info.Mounts.map((m) => m.Destination), ["/.stn"]);
    } finally {
      await backend.destroy(id);
    }
    assert.deepEqual(await labelledVolumes({ "dev.stn.session": labels["dev.stn.session"] }), []);
  } finally {
    await docker.getImage(image).remove().catch(() => {});
  }
});
