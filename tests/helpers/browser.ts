import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";

/** Where Debian's `chromium` package puts the browser (scripts/setup installs it); CHROMIUM_PATH overrides. */
export function chromiumPath(): string {
  const found = [Deno.env.get("CHROMIUM_PATH"), "/usr/bin/chromium", "/usr/bin/chromium-browser"]
    .find((p) => p && existsSync(p));
  if (!found) throw new Error("chromium is not installed: run scripts/setup (it installs Debian's chromium)");
  return found;
}

/** A real headless Chromium, and the folder its screenshots go to (printed, kept after the test). */
export interface TestBrowser {
  browser: Browser;
  artifacts: string;
  /** A new page that records every console error and uncaught exception into `errors`. */
  page(): Promise<{ page: Page; errors: string[] }>;
  /** Saves a screenshot of the viewport (or the full page) as <artifacts>/<name>.png and returns its path. */
  screenshot(page: Page, name: string, options?: { fullPage?: boolean }): Promise<string>;
  close(): Promise<void>;
}

/** Launches Chromium through playwright-core (no browser download: the Debian binary). */
export async function startBrowser(name: string): Promise<TestBrowser> {
  const artifacts = join(new URL("../../.cache/test-artifacts", import.meta.url).pathname, name);
  mkdirSync(artifacts, { recursive: true });
  console.log(`screenshots: ${artifacts}`);
  const browser = await chromium.launch({
    executablePath: chromiumPath(),
    // As root in a container Chromium's own sandbox cannot start; the pages are our own.
    args: ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"],
  });
  return {
    browser,
    artifacts,
    async page() {
      const context = await browser.newContext({
        viewport: { width: 1100, height: 720 },
        acceptDownloads: true,
      });
      const page = await context.newPage();
      page.setDefaultTimeout(10_000);
      const errors: string[] = [];
      page.on("console", (m) => {
        if (m.type() === "error") errors.push(`${m.text()} (${m.location().url})`);
      });
      page.on("pageerror", (e) => errors.push(`uncaught: ${e.message}`));
      return { page, errors };
    },
    async screenshot(page, shot, options = {}) {
      const path = join(artifacts, `${shot}.png`);
      await page.screenshot({ path, fullPage: options.fullPage ?? false });
      return path;
    },
    close: () => browser.close(),
  };
}
