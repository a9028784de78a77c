import type { Hono } from "hono";
import htmx from "htmx.org/dist/htmx.min.js" with { type: "text" };
import app from "./assets/app.js" with { type: "text" };
import style from "./assets/style.css" with { type: "text" };

// Imported as text, so they are part of the module graph: `deno compile` embeds them and nothing is read from
// the source tree at run time (docs/design/process-model.md#one-binary). No CDN: the dashboard works offline.
const ASSETS: Record<string, { body: string; type: string }> = {
  "htmx.min.js": { body: htmx, type: "text/javascript; charset=utf-8" },
  "app.js": { body: app, type: "text/javascript; charset=utf-8" },
  "style.css": { body: style, type: "text/css; charset=utf-8" },
  "favicon.svg": {
    body: `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" ` +
      `fill="#24292f"/><path d="M4 11 L8 4 L12 11" stroke="#ffb86b" stroke-width="2" fill="none"/></svg>`,
    type: "image/svg+xml",
  },
};

/** GET /ui/assets/<name>: the dashboard's script and style, open to anyone (they hold no data). */
export function addAssetRoutes(ui: Hono): void {
  ui.get("/assets/:name", (c) => {
    const asset = Object.hasOwn(ASSETS, c.req.param("name")) ? ASSETS[c.req.param("name")] : undefined;
    if (!asset) return c.text("no such asset", 404);
    return c.body(asset.body, 200, { "content-type": asset.type, "cache-control": "no-cache" });
  });
}
