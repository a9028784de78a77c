/** The `stn up` container: its create options (volume, workspace, ports on loopback, Docker socket). */

import type { ContainerCreateOptions } from "dockerode";
import { createHash } from "node:crypto";
import { CONTAINER_PORTS, DATA_DIR, SPEC_LABEL, type StationNames, UP_LABEL } from "./names.ts";

/** The host ports a station is published on. */
export interface HostPorts {
  api: number;
  mcp: number;
  agent: number;
}

/** Everything `stn up` decides about the station container. */
export interface StationSpec {
  names: StationNames;
  image: string;
  /** Absolute path of the workspace, mounted read-only at /workspace. */
  workspace: string;
  /** Host address the ports are published on (127.0.0.1 unless --bind / --publish-all). */
  bind: string;
  ports: HostPorts;
  /** The Docker socket on the host, mounted so sandboxes are sibling containers. */
  socket: string;
  /** The socket's group, added to the station user so it may use the socket. */
  socketGid: number;
  token: string;
  /** Variables the user named with --env (provider keys, STN_ settings). */
  env: Record<string, string>;
}

/** The container's create options; its SPEC_LABEL is a hash of the rest, so an unchanged `up` is a no-op. */
export function containerOptions(spec: StationSpec): ContainerCreateOptions {
  const portKey = (p: number) => `${p}/tcp`;
  const env = {
    ...spec.env,
    // The station's own settings come last: --env cannot turn the token off or move the ports.
    STATION_HOME: DATA_DIR,
    STATION_API_TOKEN: spec.token,
    STN_SERVER_API_TOKEN: spec.token,
    STN_SERVER_HOST: "0.0.0.0",
    STN_SERVER_PORT: String(CONTAINER_PORTS.api),
    STN_SERVER_MCP_PORT: String(CONTAINER_PORTS.mcp),
    STN_SERVER_AGENT_PORT: String(CONTAINER_PORTS.agent),
    STN_SANDBOX_LABELS: JSON.stringify({ [UP_LABEL]: spec.names.name }),
  };
  const published = [
    [CONTAINER_PORTS.api, spec.ports.api],
    [CONTAINER_PORTS.mcp, spec.ports.mcp],
    [CONTAINER_PORTS.agent, spec.ports.agent],
  ] as const;
  const options: ContainerCreateOptions = {
    name: spec.names.container,
    Image: spec.image,
    Cmd: ["serve", "--host", "0.0.0.0"],
    Env: Object.entries(env).map(([k, v]) => `${k}=${v}`),
    Labels: { [UP_LABEL]: spec.names.name, "dev.stn.up.workspace": spec.workspace },
    ExposedPorts: Object.fromEntries(published.map(([inside]) => [portKey(inside), {}])),
    HostConfig: {
      Binds: [`${spec.workspace}:/workspace:ro`, `${spec.socket}:/var/run/docker.sock`],
      Mounts: [{ Type: "volume", Source: spec.names.volume, Target: DATA_DIR }],
      PortBindings: Object.fromEntries(
        published.map(([inside, host]) => [portKey(inside), [{ HostIp: spec.bind, HostPort: String(host) }]]),
      ),
      GroupAdd: [String(spec.socketGid)],
      RestartPolicy: { Name: "unless-stopped" },
      CapDrop: ["ALL"],
      SecurityOpt: ["no-new-privileges"],
      Privileged: false,
      ExtraHosts: ["host.docker.internal:host-gateway"],
    },
  };
  const hash = createHash("sha256").update(JSON.stringify(options)).digest("hex").slice(0, 16);
  options.Labels![SPEC_LABEL] = hash;
  return options;
}
