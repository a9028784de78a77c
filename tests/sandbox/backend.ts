import { Buffer } from "node:buffer";
import type { Readable } from "node:stream";
import { DockerBackend, dockerClient } from "../../src/sandbox/docker.ts";

/** A Docker backend with the default limits, for tests. */
export function testBackend(): DockerBackend {
  return new DockerBackend(dockerClient(), {
    user: "1000:1000",
    memoryMb: 2048,
    cpus: 2,
    pidsLimit: 256,
    pullTimeoutMs: 30_000,
  });
}

/** Labels that mark a container as made by one test (removed in finally, found by the tests). */
export function testLabels(name: string): Record<string, string> {
  return {
    "dev.stn.session": `sbx_test_${name}_${crypto.randomUUID().slice(0, 8)}`,
    "dev.stn.scope": "agent",
  };
}

/** Reads a Node stream to the end. */
export async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** config.yaml for test stations: runtimes mapped to the locally built images. */
export const SANDBOX_CONFIG = `
sandbox:
  images:
    python: stn/python:3.11-local
    sh: stn-test/busybox:latest
  default_runtime: sh
`;

/** Removes every container a test station's home created (its station id label), whatever state it is in. */
export async function removeStationContainers(stationDb: string): Promise<void> {
  const { DatabaseSync } = await import("node:sqlite");
  const db = new DatabaseSync(stationDb);
  let id: string | undefined;
  try {
    id = (db.prepare("SELECT value FROM station_meta WHERE key = 'station_id'").get() as { value: string })
      ?.value;
  } finally {
    db.close();
  }
  if (!id) return;
  const backend = testBackend();
  for (const c of await backend.listManaged({ "dev.stn.station": id })) await backend.destroy(c.id);
}
