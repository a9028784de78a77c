/** `stn up`: builds the image if needed and starts the station's container, then waits until it answers. */

import type Docker from "dockerode";
import { resolve } from "node:path";
import type { StationPaths } from "../config/paths.ts";
import { errorMessage, StationError, usageError } from "../errors.ts";
import { sleep } from "../lib/async.ts";
import { containerOptions, type HostPorts } from "./container.ts";
import { connectEngine, inspectContainer, lastLogLines, requirePortFree } from "./docker.ts";
import { announce, saveToken, stationToken, tokenFile } from "./host.ts";
import { buildStationImage, removeStationImage, stationImage } from "./image.ts";
import { SPEC_LABEL, STATION_UID, type StationNames, stationNames, UP_LABEL } from "./names.ts";

/** What `stn up` was asked for. */
export interface UpRequest {
  paths: StationPaths;
  workspace: string;
  name?: string;
  /** Host address the ports are published on. */
  bind: string;
  ports: HostPorts;
  /** --env: NAME (taken from this environment) or NAME=value. */
  env: string[];
  rebuild: boolean;
  healthTimeoutMs: number;
  /** Progress lines for people (stderr). */
  say: (line: string) => void;
}

/** What `stn up` did, and where the station answers. */
export interface UpResult {
  container: string;
  volume: string;
  image: string;
  /** "started": new container; "replaced": new image or flags; "unchanged": it was already up like this. */
  action: "started" | "replaced" | "unchanged";
  built: boolean;
  url: string;
  mcp_url: string;
  agent_url: string;
  token_file: string;
  /** Only on the first `up` of this name: the token is shown once. */
  token?: string;
}

function readWorkspace(raw: string): string {
  const workspace = resolve(raw);
  let isDir = false;
  try {
    isDir = Deno.statSync(workspace).isDirectory;
  } catch { /* reported below */ }
  if (!isDir) {
    throw usageError(
      "workspace_not_found",
      `workspace ${workspace} is not a directory`,
      "give --workspace DIR (default: the current directory), a folder holding environments/<env>/",
    );
  }
  // The station runs as uid STATION_UID, not as this user: the folder must be open to it.
  const st = Deno.statSync(workspace);
  const shift = st.uid === STATION_UID ? 6 : st.gid === STATION_UID ? 3 : 0;
  const bits = (st.mode! >> shift) & 5;
  if (bits !== 5) {
    throw usageError(
      "workspace_unreadable",
      `workspace ${workspace} is not readable by the station's user (uid ${STATION_UID} in the container)`,
      `let others read it: chmod o+rx ${workspace} (and o+r on the files under environments/)`,
    );
  }
  return workspace;
}

/** --env values as variables: `NAME=value`, or `NAME` copied from this environment. */
export function envValues(
  entries: string[],
  env: Record<string, string | undefined>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of entries) {
    const eq = entry.indexOf("=");
    const name = eq < 0 ? entry : entry.slice(0, eq);
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
      throw usageError(
        "invalid_env",
        `--env ${JSON.stringify(entry)} is not NAME or NAME=value`,
        "e.g. --env OPENAI_API_KEY",
      );
    }
    const value = eq < 0 ? env[name] : entry.slice(eq + 1);
    if (value === undefined) {
      throw usageError(
        "invalid_env",
        `--env ${name}: ${name} is not set here`,
        `export ${name} first, or give --env ${name}=value`,
      );
    }
    out[name] = value;
  }
  return out;
}

function dockerSocket(host: string): { socket: string; gid: number } {
  const socket = host.replace(/^unix:\/\//, "");
  if (!socket.startsWith("/")) {
    throw new StationError(
      "docker_unreachable",
      `stn up gives the station the Docker socket, and DOCKER_HOST is ${host}`,
      {
        hint:
          "run stn up where the Docker Engine has a unix socket (unset DOCKER_HOST, or point it at unix:///…)",
      },
    );
  }
  return { socket, gid: Deno.statSync(socket).gid ?? 0 };
}

/** The host ports a container publishes (those are freed when it is replaced). */
function publishedPorts(info: Docker.ContainerInspectInfo | null): Set<number> {
  const bindings = info?.HostConfig?.PortBindings as Record<string, { HostPort: string }[]> | undefined;
  return new Set(Object.values(bindings ?? {}).flat().map((b) => Number(b.HostPort)));
}

/** The volume for the station's data; true when this `up` created it. */
async function ensureVolume(docker: Docker, names: StationNames): Promise<boolean> {
  const found = await docker.getVolume(names.volume).inspect().then(() => true, () => false);
  if (!found) await docker.createVolume({ Name: names.volume, Labels: { [UP_LABEL]: names.name } });
  return !found;
}

function portError(err: unknown): StationError | undefined {
  const message = errorMessage(err) ?? "";
  if (!/port is already allocated|address already in use/i.test(message)) return undefined;
  return new StationError(
    "port_in_use",
    `a port of the station is already in use: ${message.split(": ").pop()}`,
    {
      hint: "stop what listens there or pick other ports with --port",
    },
  );
}

/** Waits until /health answers ok; fails (with the container's last lines) when it exits or time runs out. */
async function waitHealthy(docker: Docker, container: string, url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = "no answer yet";
  while (Date.now() < deadline) {
    const info = await inspectContainer(docker, container);
    // The restart policy brings a crashed station back at once: a restart counts as an exit here.
    if (!info?.State.Running || info.State.Restarting || info.RestartCount > 0) {
      last = `it exited (code ${info?.State.ExitCode ?? "?"})`;
      break;
    }
    try {
      const res = await fetch(`${url}/health`, { signal: AbortSignal.timeout(2000) });
      const body = await res.json();
      if (res.ok && body.status === "ok") return;
      last = `health is ${body.status}`;
    } catch (err) {
      last = errorMessage(err);
    }
    await sleep(250);
  }
  const logs = await lastLogLines(docker, container);
  throw new StationError("station_unhealthy", `${container} did not become healthy: ${last}`, {
    hint: `it was removed; its last lines:\n${logs || "(none)"}`,
  });
}

/** `stn up`: builds or reuses the image, (re)starts the container if needed, waits until it is healthy. */
export async function up(req: UpRequest): Promise<UpResult> {
  const workspace = readWorkspace(req.workspace);
  const names = stationNames(req.name, workspace);
  const env = envValues(req.env, Deno.env.toObject());
  const { docker, host } = await connectEngine();
  const { socket, gid } = dockerSocket(host);

  const image = await stationImage(docker);
  const built = !image.present || req.rebuild;
  const tokenPath = tokenFile(req.paths, names.name);
  const { token, created } = stationToken(tokenPath);
  const options = containerOptions({
    names,
    image: image.tag,
    workspace,
    bind: req.bind,
    ports: req.ports,
    socket,
    socketGid: gid,
    token,
    env,
  });
  const clientHost = req.bind === "0.0.0.0"
    ? "127.0.0.1"
    : req.bind.includes(":")
    ? `[${req.bind}]`
    : req.bind;
  const urlOf = (port: number) => `http://${clientHost}:${port}`;
  const announced = (pid: number) =>
    announce(req.paths, {
      url: urlOf(req.ports.api),
      mcpUrl: `${urlOf(req.ports.mcp)}/mcp`,
      agentMcpUrl: `${urlOf(req.ports.agent)}/mcp`,
      pid,
      container: names.container,
      tokenFile: tokenPath,
    });
  const result = (action: UpResult["action"]): UpResult => ({
    container: names.container,
    volume: names.volume,
    image: image.tag,
    action,
    built,
    url: urlOf(req.ports.api),
    mcp_url: `${urlOf(req.ports.mcp)}/mcp`,
    agent_url: `${urlOf(req.ports.agent)}/mcp`,
    token_file: tokenPath,
    ...(created ? { token } : {}),
  });

  const existing = await inspectContainer(docker, names.container);
  const same = existing?.State.Running &&
    existing.Config.Labels?.[SPEC_LABEL] === options.Labels![SPEC_LABEL];
  if (same && !built) {
    announced(existing!.State.Pid);
    return result("unchanged");
  }
  // Checked before the build and before the old container goes: a taken port must cost nothing.
  const held = publishedPorts(existing);
  for (const port of [req.ports.api, req.ports.mcp, req.ports.agent]) {
    if (!held.has(port)) requirePortFree(req.bind, port);
  }
  if (built) {
    req.say(`building image ${image.tag} (Debian root + Deno + nats-server + stn)…`);
    const started = Date.now();
    await buildStationImage(docker, image);
    req.say(`built ${image.tag} in ${((Date.now() - started) / 1000).toFixed(1)}s`);
  }
  if (existing) {
    req.say(
      `replacing ${names.container} (${
        built ? "new image" : "new settings"
      }); the volume ${names.volume} is kept`,
    );
    await docker.getContainer(names.container).stop({ t: 10 }).catch(() => {});
    await docker.getContainer(names.container).remove({ force: true });
  }
  const volumeCreated = await ensureVolume(docker, names);
  try {
    const container = await docker.createContainer(options);
    await container.start();
    await waitHealthy(docker, names.container, urlOf(req.ports.api), req.healthTimeoutMs);
  } catch (err) {
    // Nothing half-started: the container goes, and the volume too when this up made it.
    await docker.getContainer(names.container).remove({ force: true }).catch(() => {});
    if (volumeCreated) await docker.getVolume(names.volume).remove().catch(() => {});
    if (err instanceof StationError) throw err;
    throw portError(err) ??
      new StationError("docker_error", `starting ${names.container} failed: ${errorMessage(err)}`, {
        hint: "nothing was left running; check `docker info` and try again",
      });
  }
  if (created) saveToken(tokenPath, token);
  // The image the replaced container ran is not needed any more (unless another station runs it).
  if (existing && existing.Image !== (await docker.getImage(image.tag).inspect()).Id) {
    await removeStationImage(docker, existing.Image);
  }
  announced((await inspectContainer(docker, names.container))?.State.Pid ?? 0);
  return result(existing ? "replaced" : "started");
}
