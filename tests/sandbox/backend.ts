import { Buffer } from "node:buffer";
import type { Readable } from "node:stream";
import { DockerBackend, dockerClient, type DockerLimits } from "../../src/sandbox/docker.ts";

/**
 * The two ways the backend reaches a container: the supervisor's channel, and one docker exec per
 * operation (sandbox.channel: false, and the fallback when the channel is down). Sandbox tests run
 * in both.
 */
export const MODES = [
  { name: "channel", channel: true },
  { name: "docker exec", channel: false },
] as const;
export type Mode = typeof MODES[number];

/** A Docker backend with the default limits, for tests (over the channel unless the mode says not). */
export function testBackend(mode: Mode = MODES[0], limits: Partial<DockerLimits> = {}): DockerBackend {
  return new DockerBackend(dockerClient(), {
    user: "1000:1000",
    memoryMb: 2048,
    diskMb: 1024,
    tmpMb: 256,
    cpus: 2,
    pidsLimit: 256,
    pullTimeoutMs: 30_000,
    channel: mode.channel,
    ...limits,
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

/** SANDBOX_CONFIG with the mode's sandbox.channel (more sandbox keys may follow it). */
export function sandboxConfig(mode: Mode): string {
  return `${SANDBOX_CONFIG}  channel: ${mode.channel}\n`;
}

/** The station id a test station's ledger holds (undefined before it first started). */
export async function stationIdOf(stationDb: string): Promise<string | undefined> {
  const { DatabaseSync } = await import("node:sqlite");
  const db = new DatabaseSync(stationDb);
  try {
    return (db.prepare("SELECT value FROM station_meta WHERE key = 'station_id'").get() as { value: string })
      ?.value;
  } finally {
    db.close();
  }
}

/** Removes every container a test station's home created (its station id label), whatever state it is in. */
export async function removeStationContainers(stationDb: string): Promise<void> {
  const id = await stationIdOf(stationDb);
  if (!id) return;
  const backend = testBackend();
  for (const c of await backend.listManaged({ "dev.stn.station": id })) await backend.destroy(c.id);
}

/** The names of the Docker volumes carrying these labels (sandboxes' supervisor volumes). */
export async function labelledVolumes(labels: Record<string, string>): Promise<string[]> {
  const label = Object.entries(labels).map(([k, v]) => `${k}=${v}`);
  const { Volumes } = await testBackend().docker.listVolumes({ filters: { label } });
  return (Volumes ?? []).map((v) => v.Name);
}

/** Registers one test per mode, the mode's name in the test's name. */
export function testInBothModes(name: string, fn: (mode: Mode) => Promise<void>): void {
  for (const mode of MODES) Deno.test(`${name} [${mode.name}]`, () => fn(mode));
}
