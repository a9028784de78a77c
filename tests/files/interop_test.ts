import assert from "node:assert/strict";
import { Objm } from "@nats-io/obj";
import { digestToChecksum } from "../../src/files/checksum.ts";
import { startTestStation } from "../helpers/station.ts";
import { checksumOf, randomBytes } from "./bytes.ts";

Deno.test("interop: a plain @nats-io/obj client reads what stn stores, and stn serves what it stores", async () => {
  const ts = await startTestStation();
  const nc = ts.station.ctx.nats.nc;
  try {
    const raw = await new Objm(nc).open(ts.station.ctx.files.bucket);

    // stn → plain client
    const bytes = randomBytes(700_000);
    const put = await fetch(`${ts.station.url}/api/v1/files/runs/r7/output/out.bin`, {
      method: "PUT",
      body: bytes,
    });
    assert.equal(put.status, 201);
    const { checksum } = await put.json();
    const blob = await raw.getBlob("runs/r7/output/out.bin");
    assert.ok(blob);
    assert.equal(checksumOf(blob), checksumOf(bytes));
    const info = await raw.info("runs/r7/output/out.bin");
    assert.equal(digestToChecksum(info?.digest), checksum);

    // plain client → stn
    const theirs = randomBytes(333_333);
    await raw.putBlob({ name: "sessions/s1/from-go.dat" }, theirs);
    const list = await (await fetch(`${ts.station.url}/api/v1/files?prefix=sessions/s1/`)).json();
    assert.deepEqual(list.files.map((f: { key: string }) => f.key), ["sessions/s1/from-go.dat"]);
    assert.equal(list.files[0].checksum, checksumOf(theirs));
    assert.equal(list.files[0].size_bytes, theirs.length);
    const get = await fetch(`${ts.station.url}/api/v1/files/sessions/s1/from-go.dat`);
    assert.equal(get.headers.get("x-checksum-sha256"), checksumOf(theirs).slice(7));
    assert.equal(checksumOf(new Uint8Array(await get.arrayBuffer())), checksumOf(theirs));
  } finally {
    await ts.close();
  }
});
