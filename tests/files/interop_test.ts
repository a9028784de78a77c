import { assert, assertEquals, assertStrictEquals } from "../helpers/assert.ts";
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
    assertStrictEquals(put.status, 201);
    const { checksum } = await put.json();
    const blob = await raw.getBlob("runs/r7/output/out.bin");
    assert(blob);
    assertStrictEquals(checksumOf(blob), checksumOf(bytes));
    const info = await raw.info("runs/r7/output/out.bin");
    assertStrictEquals(digestToChecksum(info?.digest), checksum);

    // plain client → stn
    const theirs = randomBytes(333_333);
    await raw.putBlob({ name: "sessions/s1/from-go.dat" }, theirs);
    const list = await (await fetch(`${ts.station.url}/api/v1/files?prefix=sessions/s1/`)).json();
    assertEquals(list.files.map((f: { key: string }) => f.key), ["sessions/s1/from-go.dat"]);
    assertStrictEquals(list.files[0].checksum, checksumOf(theirs));
    assertStrictEquals(list.files[0].size_bytes, theirs.length);
    const get = await fetch(`${ts.station.url}/api/v1/files/sessions/s1/from-go.dat`);
    assertStrictEquals(get.headers.get("x-checksum-sha256"), checksumOf(theirs).slice(7));
    assertStrictEquals(checksumOf(new Uint8Array(await get.arrayBuffer())), checksumOf(theirs));
  } finally {
    await ts.close();
  }
});
