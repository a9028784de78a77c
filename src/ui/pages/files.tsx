/** /ui/files: the stored files under a prefix; upload, download and delete go to the files API. */

import type { Context, Hono } from "hono";
import type { StationContext } from "../../context.ts";
import { Layout, type PageContext } from "../layout.tsx";
import { ApiForm, encodePath, Time } from "../parts.tsx";

/** Bytes as a short human size. */
function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let v = n / 1024, i = 0;
  while (v >= 1024 && i < units.length - 1) v /= 1024, i++;
  return `${v.toFixed(1)} ${units[i]}`;
}

/** /ui/files: the stored files under a prefix; upload, download and delete go to the files API. */
export function addFileRoutes(ui: Hono, ctx: StationContext, page: (c: Context) => PageContext): void {
  ui.get("/files", async (c) => {
    const prefix = c.req.query("prefix") ?? "";
    const list = await ctx.files.list({ prefix, cursor: c.req.query("cursor") || undefined, limit: 200 });
    return c.html(
      <Layout title="Files" section="files" page={page(c)}>
        <ApiForm action="/api/v1/files" multipart label="Upload a file">
          <div class="filters">
            <div>
              <label for="key">Key (optional)</label>
              <input id="key" name="key" placeholder="reports/today.csv" />
            </div>
            <div>
              <label for="file">File</label>
              <input id="file" name="file" type="file" required />
            </div>
            <button type="submit">Upload</button>
          </div>
        </ApiForm>
        <form method="get" action="/ui/files" class="filters" aria-label="Filter files">
          <div>
            <label for="prefix">Key prefix</label>
            <input id="prefix" name="prefix" value={prefix} />
          </div>
          <button type="submit" class="secondary">Filter</button>
        </form>
        {list.files.length === 0
          ? (
            <p class="muted">
              No files{prefix ? ` under ${prefix}` : ""}. Upload one above, or from a shell with{" "}
              <code>stn files upload ./report.csv</code>; runs publish theirs here too.
            </p>
          )
          : (
            <table>
              <caption>Stored files</caption>
              <thead>
                <tr>
                  <th scope="col">Key</th>
                  <th scope="col">Size</th>
                  <th scope="col">Type</th>
                  <th scope="col">Stored</th>
                  <th scope="col">Expires</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {list.files.map((f) => (
                  <tr>
                    <td>
                      <code>{f.key}</code>
                    </td>
                    <td>{formatBytes(f.size_bytes)}</td>
                    <td>{f.content_type}</td>
                    <td>
                      <Time iso={f.created_at} />
                    </td>
                    <td>
                      <Time iso={f.expires_at ?? null} />
                    </td>
                    <td>
                      <div class="actions">
                        <a
                          href={`/api/v1/files/${encodePath(f.key)}`}
                          download
                          aria-label={`Download ${f.key}`}
                        >
                          Download
                        </a>
                        <ApiForm
                          action={`/api/v1/files/${encodePath(f.key)}`}
                          method="DELETE"
                          class="inline"
                          label={`Delete ${f.key}`}
                        >
                          <button type="submit" class="danger" aria-label={`Delete ${f.key}`}>Delete</button>
                        </ApiForm>
                      </div>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        {list.next_cursor
          ? (
            <a
              href={`/ui/files?prefix=${encodeURIComponent(prefix)}&cursor=${
                encodeURIComponent(list.next_cursor)
              }`}
            >
              More files
            </a>
          )
          : null}
      </Layout>,
    );
  });
}
