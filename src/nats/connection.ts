/** Connecting to NATS: the target (url and credentials) from the config, with reconnects. */

import { readFileSync } from "node:fs";
import {
  type Authenticator,
  connect,
  credsAuthenticator,
  type NatsConnection,
  nkeyAuthenticator,
  type NodeConnectionOptions,
} from "@nats-io/transport-node";
import type { Config } from "../config/schema.ts";
import { errorMessage, StationError } from "../errors.ts";

export type { NatsConnection };

/** Where a NATS server is and how to prove who we are to it. Secrets never leave this object. */
export interface NatsTarget {
  /** Server URL(s), comma-separated, without credentials: safe to log and show. */
  url: string;
  user?: string;
  password?: string;
  token?: string;
  /** A JWT creds file (`nsc` / NGS); its user JWT and nkey seed. */
  credsFile?: string;
  /** A file holding a user nkey seed (`SU…`). */
  nkeyFile?: string;
  tls?: { caFile?: string; certFile?: string; keyFile?: string };
}

/**
 * The target nats.url and the nats.* credential keys describe. Credentials in the URL (`nats://user:pass@…`
 * or `nats://token@…`) are taken out of it, so the URL can be shown; the keys win over the URL.
 */
export function natsTarget(nats: Config["nats"] & { url: string }): NatsTarget {
  const fromUrl: { user?: string; password?: string; token?: string } = {};
  let tlsScheme = false;
  const servers = nats.url.split(",").map((s) => s.trim()).filter((s) => s !== "").map((server) => {
    const m = /^([a-z]+:\/\/)?(?:([^@/]*)@)?(.*)$/i.exec(server)!;
    if (m[1]?.toLowerCase() === "tls://") tlsScheme = true;
    if (m[2] !== undefined) {
      const [user, password] = m[2].split(":", 2).map(decodeURIComponent);
      if (password !== undefined) Object.assign(fromUrl, { user, password });
      else Object.assign(fromUrl, { token: user });
    }
    return (m[1] ?? "") + m[3];
  });
  const tlsFiles = { caFile: nats.tls_ca_file, certFile: nats.tls_cert_file, keyFile: nats.tls_key_file };
  const wantsTls = tlsScheme || Object.values(tlsFiles).some((v) => v !== undefined);
  return {
    url: servers.join(","),
    user: nats.user ?? fromUrl.user,
    password: nats.password ?? fromUrl.password,
    token: nats.token ?? fromUrl.token,
    credsFile: nats.creds_file,
    nkeyFile: nats.nkey_file,
    tls: wantsTls ? tlsFiles : undefined,
  };
}

function readSecret(path: string, what: string): Uint8Array {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new StationError(
      "nats_credentials_unreadable",
      `cannot read the NATS ${what} ${path}: ${errorMessage(err)}`,
      {
        hint: `check nats.${
          what === "creds file" ? "creds_file" : "nkey_file"
        } and that this user may read it`,
        exitCode: 1,
      },
    );
  }
}

/** The nats.js connection options for a target (credentials, TLS), without the reconnect policy. */
export function connectOptions(target: NatsTarget): NodeConnectionOptions {
  const authenticator: Authenticator[] = [];
  if (target.credsFile) authenticator.push(credsAuthenticator(readSecret(target.credsFile, "creds file")));
  if (target.nkeyFile) {
    const seed = new TextDecoder().decode(readSecret(target.nkeyFile, "nkey seed file")).trim();
    authenticator.push(nkeyAuthenticator(new TextEncoder().encode(seed)));
  }
  const tls = target.tls
    ? Object.fromEntries(Object.entries(target.tls).filter(([, v]) => v !== undefined))
    : undefined;
  return {
    servers: target.url.split(","),
    ...(target.user !== undefined ? { user: target.user, pass: target.password } : {}),
    ...(target.token !== undefined ? { token: target.token } : {}),
    ...(authenticator.length > 0 ? { authenticator } : {}),
    ...(tls ? { tls } : {}),
  };
}

/** Connects to NATS, turning an unreachable server or refused credentials into a StationError with a hint. */
export async function connectNats(target: NatsTarget, name = "stn"): Promise<NatsConnection> {
  const options = connectOptions(target);
  try {
    return await connect({
      ...options,
      name,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 500,
      timeout: 5_000,
      // Otherwise every request (each JetStream publish of a step) builds two Errors up front for their stack
      // traces: 4% of the engine benchmark's main thread. A failed request still says what failed.
      noAsyncTraces: true,
    });
  } catch (err) {
    const message = errorMessage(err);
    if (/authoriz|authenticat/i.test(message)) {
      throw new StationError(
        "nats_unauthorized",
        `NATS at ${target.url} refused our credentials: ${message}`,
        {
          hint: "set nats.user/nats.password, nats.token, nats.creds_file or nats.nkey_file (or put " +
            "user:password@ in nats.url) to what that server expects",
          cause: err,
        },
      );
    }
    if (/certificate|self[- ]signed|tls|ssl/i.test(message)) {
      throw new StationError("nats_tls_failed", `TLS to NATS at ${target.url} failed: ${message}`, {
        hint: "set nats.tls_ca_file to the CA that signed the server's certificate (and nats.tls_cert_file " +
          "+ nats.tls_key_file if it verifies clients); the certificate must name the host in nats.url",
        cause: err,
      });
    }
    throw new StationError(
      "nats_unreachable",
      `cannot connect to NATS at ${target.url}: ${message}`,
      {
        hint: "check nats.url / --nats-url, or omit it to let stn start its own nats-server",
        cause: err,
      },
    );
  }
}
