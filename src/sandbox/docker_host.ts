import { userInfo } from "node:os";
import { join } from "node:path";
import { errorMessage } from "../errors.ts";

/** The Docker Engine address stn uses, and where that choice came from. */
export interface DockerHost {
  /** A socket path or tcp://host:port. */
  host: string;
  source: "config" | "DOCKER_HOST" | "standard location" | "default";
}

/** Where Docker Engine, rootless Docker, Docker Desktop, Colima and Rancher Desktop put their socket. */
export function standardDockerSockets(
  env: Record<string, string | undefined> = Deno.env.toObject(),
): string[] {
  const home = env.HOME;
  const uid = Deno.uid();
  return [
    "/var/run/docker.sock",
    "/run/docker.sock",
    ...(env.XDG_RUNTIME_DIR ? [join(env.XDG_RUNTIME_DIR, "docker.sock")] : []),
    ...(uid !== null ? [`/run/user/${uid}/docker.sock`] : []),
    ...(home
      ? [
        join(home, ".docker", "run", "docker.sock"),
        join(home, ".colima", "default", "docker.sock"),
        join(home, ".rd", "docker.sock"),
      ]
      : []),
  ];
}

function isSocket(path: string): boolean {
  try {
    return Deno.statSync(path).isSocket === true;
  } catch {
    return false;
  }
}

/** Resolves the Docker Engine: sandbox.docker_host, else DOCKER_HOST, else the first standard socket that exists. */
export function resolveDockerHost(
  configured: string | undefined,
  env: Record<string, string | undefined> = Deno.env.toObject(),
): DockerHost {
  if (configured) return { host: configured, source: "config" };
  if (env.DOCKER_HOST) return { host: env.DOCKER_HOST, source: "DOCKER_HOST" };
  const found = standardDockerSockets(env).find(isSocket);
  return found
    ? { host: found, source: "standard location" }
    : { host: "/var/run/docker.sock", source: "default" };
}

/** Why the Docker Engine did not answer, and what fixes it. */
export interface DockerProblem {
  /** "permission": the socket is there but this user may not use it; "down": nothing answers. */
  kind: "permission" | "down";
  message: string;
  hint: string;
}

/** Turns a failed ping into what a user needs to read: the cause and the fix. */
export function explainDockerError(err: unknown, host: string): DockerProblem {
  const code = (err as { code?: string }).code;
  if (code === "EACCES" || code === "EPERM") {
    let user = "$USER";
    try {
      user = userInfo().username;
    } catch { /* no passwd entry */ }
    return {
      kind: "permission",
      message: `permission denied on the Docker socket ${host}: user ${user} may not use Docker`,
      hint: `add the user to the docker group (sudo usermod -aG docker ${user}, then log in again), ` +
        "or set sandbox.enabled: false to run without sandboxes",
    };
  }
  return {
    kind: "down",
    message: `the Docker Engine at ${host} is not reachable: ${errorMessage(err)}`,
    hint:
      "start it (sudo systemctl start docker, or scripts/setup), point sandbox.docker_host or DOCKER_HOST " +
      "at it, or set sandbox.enabled: false to run without sandboxes",
  };
}
