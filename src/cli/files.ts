/** `stn files …`: upload, download, list, stat and delete stored files, streamed with progress. */

import { lazyImport } from "../lib/lazy_import.ts";
import { basename, dirname, join, resolve } from "../lib/path.ts";
import type { Command } from "./command.ts";
import { deleteFile, downloadFile, fileInfo, listFiles, pruneFiles, uploadFile } from "../client/files.ts";
import { usageError } from "../errors.ts";
import { keyBasename } from "../files/keys.ts";
import { formatBytes } from "../files/size.ts";
import type { FileInfo } from "../contract/files.ts";
import { youngGcEvery } from "../lib/young_gc.ts";
import { jsonMode, withStation } from "./context.ts";
import { ttlFlag } from "./flags.ts";
import { localFileError } from "./local_files.ts";
import { fail, fields, render, StationError, table } from "./output.ts";
import { moreNote, type PageFlags, pageFlags, readPages } from "./paging.ts";
import { progressBar } from "./progress.ts";

/** "12s", "5m", "3h", "2d": the largest whole unit, for table columns. */
function roughly(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86400) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}

/** The file name a download's Content-Disposition proposes, if any. */
function dispositionName(header: string | null): string | undefined {
  const star = /filename\*=UTF-8''([^;]+)/i.exec(header ?? "");
  if (star) {
    try {
      return basename(decodeURIComponent(star[1]));
    } catch { /* fall back to the plain form */ }
  }
  const plain = /filename="([^"]*)"/i.exec(header ?? "");
  return plain?.[1] ? basename(plain[1]) : undefined;
}

async function upload(
  cmd: Command,
  source: string,
  opts: { key?: string; ttl?: string; keep?: boolean; contentType?: string },
): Promise<void> {
  const ttl = ttlFlag(opts);
  let body: ReadableStream<Uint8Array>;
  let size: number | undefined;
  let filename: string | undefined;
  if (source === "-") {
    body = Deno.stdin.readable;
  } else {
    let file: Deno.FsFile;
    try {
      const stat = await Deno.stat(source);
      if (!stat.isFile) throw new StationError("not_a_file", `${source} is not a regular file`);
      file = await Deno.open(source, { read: true });
    } catch (err) {
      throw localFileError(source, err);
    }
    size = (await file.stat()).size;
    body = file.readable;
    filename = basename(source);
  }
  await withStation(cmd, async (client) => {
    const result = await uploadFile(client, body.pipeThrough(progressBar("upload", size)), {
      key: opts.key,
      ttl,
      contentType: opts.contentType,
      filename,
      size,
    });
    render(result, {
      json: jsonMode(cmd),
      text: (r) => [
        `Uploaded: ${r.file_key} (${formatBytes(r.size_bytes)})`,
        ...(r.expires_at ? [`Expires:  ${r.expires_at}`] : []),
      ],
    });
  });
}

async function uploadRecursive(
  cmd: Command,
  dir: string,
  opts: {
    key?: string;
    keyPrefix?: string;
    concurrency: string;
    ttl?: string;
    keep?: boolean;
    contentType?: string;
  },
): Promise<void> {
  if (opts.key !== undefined || dir === "-") {
    throw usageError(
      "invalid_usage",
      `-r uploads a folder: ${dir === "-" ? "stdin (-)" : "--key"} cannot be used with it`,
      "use --key-prefix PREFIX for the keys' common start",
    );
  }
  const concurrency = Number(opts.concurrency);
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 64) {
    throw usageError("invalid_usage", `--concurrency ${opts.concurrency} is not a whole number from 1 to 64`);
  }
  const stat = await Deno.stat(dir).catch((err) => {
    throw localFileError(dir, err);
  });
  if (!stat.isDirectory) throw new StationError("not_a_file", `${dir} is not a folder`, { hint: "drop -r" });
  const ttl = ttlFlag(opts);
  const { uploadDir } = await lazyImport<typeof import("./files_upload_dir.ts")>(
    "./files_upload_dir.ts",
    import.meta.url,
  );
  await withStation(cmd, async (client) => {
    const result = await uploadDir(client, dir, {
      keyPrefix: opts.keyPrefix,
      ttl,
      contentType: opts.contentType,
      concurrency,
    });
    const json = jsonMode(cmd);
    const text = (r: typeof result) => [
      `Uploaded: ${r.uploaded} file(s), ${formatBytes(r.bytes)}, under ${r.key_prefix || "(no prefix)"}`,
      ...r.failed.map((f) => `Failed:   ${f.path}: ${f.message}`),
      ...(r.skipped.length ? [`Skipped:  ${r.skipped.length} symlink(s) or special file(s)`] : []),
    ];
    if (result.failed.length > 0) {
      fail(
        result,
        { json, text },
        new StationError(
          "upload_incomplete",
          `${result.failed.length} of ${result.failed.length + result.uploaded} file(s) were not uploaded`,
          {
            hint: "the others are stored; run the same command again to upload them all (keys are replaced)",
          },
        ),
      );
    }
    render(result, { json, text });
  });
}

async function download(
  cmd: Command,
  key: string,
  opts: { output?: string; force?: boolean },
): Promise<void> {
  const toStdout = opts.output === "-";
  if (toStdout && jsonMode(cmd)) {
    throw usageError(
      "json_with_stdout",
      "--json cannot be used with -o - (stdout carries the file)",
      "write to a file: -o PATH",
    );
  }
  if (opts.output && !toStdout && !opts.force && await exists(opts.output)) throw fileExists(opts.output);
  // node:crypto is loaded by the command that hashes, not by every command (main.ts's static imports).
  const { sha256 } = await lazyImport<typeof import("../files/checksum.ts")>(
    "../files/checksum.ts",
    import.meta.url,
  );
  await withStation(cmd, async (client) => {
    // The bytes are checked below against the stored checksum, so the server need not check them too.
    const res = await downloadFile(client, key, { verifies: true });
    const expected = res.headers.get("x-checksum-sha256");
    const length = Number(res.headers.get("content-length") ?? NaN);
    const hash = sha256();
    const collect = youngGcEvery();
    const hashing = new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        hash.update(chunk);
        collect(chunk.length);
        controller.enqueue(chunk);
      },
    });
    const bytes = res.body!.pipeThrough(hashing).pipeThrough(
      progressBar("download", Number.isFinite(length) ? length : undefined),
    );
    const verify = () => {
      const actual = hash.digest("hex");
      if (expected && actual !== expected) {
        throw new StationError(
          "checksum_mismatch",
          `downloaded bytes do not match the stored checksum (sha256 ${actual}, expected ${expected})`,
          { hint: "try the download again; if it persists the stored file is damaged" },
        );
      }
    };
    if (toStdout) {
      await bytes.pipeTo(Deno.stdout.writable, { preventClose: true });
      return verify();
    }

    const target = resolve(
      opts.output ?? dispositionName(res.headers.get("content-disposition")) ?? keyBasename(key),
    );
    if (!opts.force && await exists(target)) {
      await bytes.cancel();
      throw fileExists(target);
    }
    const temp = join(dirname(target), `.${basename(target)}.${crypto.randomUUID().slice(0, 8)}.part`);
    try {
      const file = await Deno.open(temp, { write: true, createNew: true });
      await bytes.pipeTo(file.writable);
      verify();
      await Deno.rename(temp, target);
    } catch (err) {
      await Deno.remove(temp).catch(() => {});
      throw err;
    }
    const size = (await Deno.stat(target)).size;
    render({ path: target, size_bytes: size, checksum: `sha256:${expected}` }, {
      json: jsonMode(cmd),
      text: (r) => `Downloaded: ${opts.output ?? basename(target)} (${formatBytes(r.size_bytes)})`,
    });
  });
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch {
    return false;
  }
}

function fileExists(path: string): StationError {
  return new StationError("file_exists", `${path} already exists`, {
    hint: "pass --force to replace it, or choose another path with -o",
  });
}

/** When a file expires, in words: its date, "with sbx_…" while its session is open, or "never". */
function expiry(info: FileInfo): string {
  if (info.expires_at) return info.expires_at;
  return info.expires_with_session ? `with ${info.expires_with_session}` : "never";
}

function infoFields(info: FileInfo): [string, string][] {
  const fields: [string, string][] = [
    ["key", info.key],
    ["size", `${formatBytes(info.size_bytes)} (${info.size_bytes} bytes)`],
    ["type", info.content_type],
    ["checksum", info.checksum],
    ["created", info.created_at],
    ["expires", expiry(info)],
  ];
  if (info.filename) fields.push(["filename", info.filename]);
  for (const [k, v] of Object.entries(info.metadata)) fields.push([`meta.${k}`, v]);
  return fields;
}

/** `stn files …`: upload, download, list, inspect and delete files in the object store. */
export function filesCommand(program: Command): void {
  const files = program.command("files")
    .description("stage files in the NATS object store: upload, download, list, info, delete, prune");

  files.command("upload")
    .description("upload a file (or - for stdin); prints its key, e.g. files/f_01J…")
    .argument("<path>", "file to upload, or - to read stdin")
    .option("--key <key>", "store under this key (default files/f_<ULID>), e.g. runs/r1/output/report.csv")
    .option(
      "--ttl <duration>",
      "delete after this long, e.g. 30m, 24h, 7d (default storage.default_ttl; 0 = never)",
    )
    .option("--keep", "never expire the file (same as --ttl 0)")
    .option("--content-type <type>", "media type (default: from the file name)")
    .option("-r, --recursive", "upload every regular file under the folder <path>, several at a time")
    .option(
      "--key-prefix <prefix>",
      "with -r: keys are this + the path under the folder (default files/<folder>/)",
    )
    .option("--concurrency <n>", "with -r: uploads at once", "8")
    .addHelpText(
      "after",
      "\nWith -r the result lists every key; a file that fails does not stop the others, and the command then" +
        "\nexits 1 (upload_incomplete) naming them. Symlinks are not followed. Progress shows on a terminal.",
    )
    .action((path: string, opts, cmd: Command) =>
      opts.recursive ? uploadRecursive(cmd, path, opts) : upload(cmd, path, opts)
    );

  files.command("download")
    .description("download a file; verifies its checksum and writes atomically (temp file + rename)")
    .argument("<key>", "file key, e.g. files/f_01J… (or just f_01J…)")
    .option(
      "-o, --output <path>",
      "where to write, - for stdout (default: the uploaded name, else the key's last part)",
    )
    .option("-f, --force", "replace an existing file")
    .action((key: string, opts, cmd: Command) => download(cmd, key, opts));

  pageFlags(
    files.command("list")
      .description("list stored files (expired ones are not shown); one page, --all for every page")
      .option("--prefix <prefix>", "only keys starting with this, e.g. runs/"),
    1000,
  ).action(async (opts: PageFlags & { prefix?: string }, cmd: Command) => {
    await withStation(cmd, async (client) => {
      const page = await readPages<"files", FileInfo>(
        opts,
        "files",
        (cursor, limit) => listFiles(client, { prefix: opts.prefix, limit, cursor }),
      );
      render(page, {
        json: jsonMode(cmd),
        text: (p) => {
          if (p.files.length === 0) return "no files" + (opts.prefix ? ` under ${opts.prefix}` : "");
          moreNote(p.next_cursor);
          const now = Date.now();
          return table(
            ["KEY", "SIZE", "TYPE", "AGE", "EXPIRES"],
            p.files.map((f) => [
              f.key,
              formatBytes(f.size_bytes),
              f.content_type,
              roughly(now - Date.parse(f.created_at)),
              f.expires_at ? `in ${roughly(Date.parse(f.expires_at) - now)}` : expiry(f),
            ]),
          );
        },
      });
    });
  });

  files.command("info")
    .description("show a file's size, type, checksum, dates and metadata")
    .argument("<key>", "file key")
    .action(async (key: string, _opts: unknown, cmd: Command) => {
      await withStation(cmd, async (client) => {
        render(await fileInfo(client, key), {
          json: jsonMode(cmd),
          text: (info) => fields(infoFields(info)),
        });
      });
    });

  files.command("delete")
    .description("delete a file (asks first on a terminal; without one, or with --json, --force is required)")
    .argument("<key>", "file key")
    .option("-f, --force", "do not ask")
    .action(async (key: string, opts: { force?: boolean }, cmd: Command) => {
      const json = jsonMode(cmd);
      if (!opts.force && (json || !Deno.stdin.isTerminal())) {
        throw usageError(
          "confirmation_required",
          `refusing to delete ${key} without confirmation`,
          "pass --force",
        );
      }
      await withStation(cmd, async (client) => {
        const info = await fileInfo(client, key);
        if (!opts.force) {
          const answer = prompt(`Delete ${info.key} (${formatBytes(info.size_bytes)})? [y/N]`);
          if (!/^y(es)?$/i.test(answer?.trim() ?? "")) {
            return render({ deleted: null }, { json, text: () => "Not deleted." });
          }
        }
        await deleteFile(client, info.key);
        render({ deleted: info.key }, { json, text: (r) => `Deleted: ${r.deleted}` });
      });
    });

  files.command("prune")
    .description("delete the expired files now, as the reaper does every storage.cleanup.interval")
    .option("--dry-run", "only list the expired files; delete nothing")
    .action(async (opts: { dryRun?: boolean }, cmd: Command) => {
      await withStation(cmd, async (client) => {
        render(await pruneFiles(client, opts.dryRun), {
          json: jsonMode(cmd),
          text: (r) => [
            ...r.files.map((f) => `${f.key}  ${formatBytes(f.size_bytes)}  expired ${f.expires_at}`),
            `${r.dry_run ? "Would delete" : "Deleted"} ${r.count} expired file${r.count === 1 ? "" : "s"} ` +
            `(${formatBytes(r.bytes)})`,
          ],
        });
      });
    });
}
