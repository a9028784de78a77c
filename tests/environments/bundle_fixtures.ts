import { Buffer } from "node:buffer";
import { createHash } from "node:crypto";
import { gzipSync } from "node:zlib";
import tar from "tar-stream";

/** Builders of bundles, honest and hostile, for the bundle tests. */

/** One tar member: a file (text or bytes), or a header only (links, folders, devices). */
export interface Member {
  name: string;
  body?: string | Uint8Array;
  type?: "file" | "directory" | "symlink" | "link" | "fifo" | "character-device";
  linkname?: string;
}

const bytesOf = (b: string | Uint8Array | undefined) =>
  typeof b === "string" ? new TextEncoder().encode(b) : b ?? new Uint8Array();

/** What the files hold, as an honest manifest lists it: agents and workflows by file name, MCP servers by name. */
function contentsOf(files: Member[]): Record<string, string[]> {
  const stem = (f: Member, re: RegExp) => f.name.split("/").pop()!.replace(re, "");
  const plain = files.filter((f) => (f.type ?? "file") === "file");
  return {
    agents: plain.filter((f) => f.name.startsWith("agents/")).map((f) => stem(f, /\.prompt$/)),
    mcp_servers: plain.filter((f) => f.name.endsWith(".json") && !f.name.startsWith("workflows/")).flatMap(
      (f) => {
        try {
          return Object.keys(JSON.parse(new TextDecoder().decode(bytesOf(f.body))).mcpServers ?? {});
        } catch {
          return [];
        }
      },
    ),
    workflows: plain.filter((f) => f.name.startsWith("workflows/")).map((f) => stem(f, /\.workflow\.\w+$/)),
  };
}

/** A manifest listing `files` with their real checksums and contents (`extra` overrides any field). */
export function manifestFor(files: Member[], extra: Record<string, unknown> = {}): Member {
  const manifest = {
    format: "stn-bundle/1",
    name: "shared",
    version: "1.0.0",
    stn_version: "0.0.0",
    created_at: new Date(0).toISOString(),
    contents: contentsOf(files),
    variables: [],
    files: files.filter((f) => (f.type ?? "file") === "file").map((f) => ({
      path: f.name,
      size: bytesOf(f.body).length,
      sha256: createHash("sha256").update(bytesOf(f.body)).digest("hex"),
    })),
    ...extra,
  };
  return { name: "manifest.json", body: JSON.stringify(manifest) };
}

/** The members packed as a .tar.gz with tar-stream. */
export async function tarGz(members: Member[]): Promise<Uint8Array> {
  const pack = tar.pack();
  for (const m of members) {
    const type = m.type ?? "file";
    if (type === "file") pack.entry({ name: m.name, type }, bytesOf(m.body));
    else pack.entry({ name: m.name, type, linkname: m.linkname, size: 0 });
  }
  pack.finalize();
  const chunks: Uint8Array[] = [];
  for await (const c of pack) chunks.push(c as Uint8Array);
  return new Uint8Array(gzipSync(Buffer.concat(chunks)));
}

/**
 * A tar whose one member's header claims `size` bytes that never follow (a 2 GiB member costs nothing to
 * describe): a reader that trusts the header would try to read it all.
 */
export function hugeMemberTarGz(name: string, size: number): Uint8Array {
  const header = new Uint8Array(512);
  const put = (at: number, text: string) => header.set(new TextEncoder().encode(text), at);
  put(0, name);
  put(100, "0000644\0");
  put(108, "0000000\0");
  put(116, "0000000\0");
  put(124, size.toString(8).padStart(11, "0") + "\0");
  put(136, "00000000000\0");
  put(148, "        ");
  put(156, "0");
  put(257, "ustar\0");
  put(263, "00");
  const sum = header.reduce((n, b) => n + b, 0);
  put(148, sum.toString(8).padStart(6, "0") + "\0 ");
  const archive = new Uint8Array(512 + 64 * 1024);
  archive.set(header);
  return new Uint8Array(gzipSync(archive));
}
