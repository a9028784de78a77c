/** The Docker Engine `stn up` talks to (DOCKER_HOST, else the standard sockets), and container lookups. */

import type Docker from "dockerode";
import { Buffer } from "node:buffer";
import { StationError } from "../errors.ts";
import { dockerClient } from "../sandbox/docker.ts";
import { explainDockerError, resolveDockerHost } from "../sandbox/docker_host.ts";

/** A Docker Engine that answered, and where it listens. */
export interface Engine {
  docker: Docker;
  /** A socket path or tcp:// address. */
  host: string;
}

/** Connects to the Docker Engine (DOCKER_HOST, else the standard sockets); one clear error when it does not answer. */
export async function connectEngine(): Promise<Engine> {
  const { host } = resolveDockerHost(undefined);
  const docker = dockerClient(host);
  try {
    await docker.ping();
  } catch (err) {
    const problem = explainDockerError(err, host);
    throw new StationError("docker_unreachable", problem.message, {
      hint: problem.kind === "permission"
        ? problem.hint.replace(/, or set sandbox\.enabled.*$/, "")
        : "start it (sudo systemctl start docker, or scripts/setup), or point DOCKER_HOST at it",
    });
  }
  return { docker, host };
}

/** True when Docker says the object does not exist. */
export function isMissing(err: unknown): boolean {
  return (err as { statusCode?: number }).statusCode === 404;
}

/** The container's inspect answer, or null when there is no such container. */
export function inspectContainer(docker: Docker, name: string): Promise<Docker.ContainerInspectInfo | null> {
  return docker.getContainer(name).inspect().catch((err) => {
    if (isMissing(err)) return null;
    throw err;
  });
}

/** Docker's multiplexed log frames (8-byte header: stream 1 or 2, 0, 0, 0, size) as (stream, bytes) pairs. */
export function* logFrames(buf: Uint8Array): Generator<{ stream: number; data: Uint8Array }> {
  const data = Buffer.from(buf);
  for (let i = 0; i + 8 <= data.length;) {
    const size = data.readUInt32BE(i + 4);
    yield { stream: data[i], data: data.subarray(i + 8, i + 8 + size) };
    i += 8 + size;
  }
}

/** The last lines a container printed (stdout and stderr), for an error message. */
export async function lastLogLines(docker: Docker, name: string, lines = 15): Promise<string> {
  try {
    const buf = await docker.getContainer(name).logs({
      stdout: true,
      stderr: true,
      tail: lines,
      follow: false,
    });
    const dec = new TextDecoder();
    // without follow, dockerode answers the log as a Buffer; its types say a stream.
    return [...logFrames(buf as unknown as Uint8Array)].map((f) => dec.decode(f.data)).join("").trim();
  } catch {
    return "";
  }
}

/** Fails with port_in_use when something on this host already listens on the address. */
export function requirePortFree(address: string, port: number): void {
  let listener: Deno.Listener | undefined;
  try {
    listener = Deno.listen({ hostname: address, port });
  } catch (err) {
    if (err instanceof Deno.errors.AddrInUse) {
      throw new StationError("port_in_use", `port ${port} on ${address} is already in use`, {
        hint: "stop what listens there (`stn down`, another stn serve?) or pick other ports with --port",
      });
    }
    throw err;
  } finally {
    listener?.close();
  }
}
