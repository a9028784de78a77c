/** The dashboard's page shell: navigation, title, script and style. */

import { raw } from "hono/html";
import type { Child } from "hono/jsx";

/** The dashboard's sections, in the order of the navigation bar. */
const SECTIONS = [
  ["runs", "Runs"],
  ["agent-runs", "Agent runs"],
  ["approvals", "Approvals"],
  ["workflows", "Workflows"],
  ["files", "Files"],
  ["sandboxes", "Sandboxes"],
  ["tests", "Tests"],
  ["evals", "Evals"],
] as const;

/** A section of the dashboard (which navigation link is current). */
export type Section = (typeof SECTIONS)[number][0] | "login" | "error";

/** What every page knows about the request: whether a login is in force (so a logout button shows). */
export interface PageContext {
  loggedIn: boolean;
}

/** The page shell: skip link, navigation with the current section marked, one <main> with the page's <h1>. */
export function Layout(
  props: { title: string; section: Section; page: PageContext; children?: Child },
) {
  // JSX cannot write a doctype; without one browsers render in quirks mode.
  return (
    <>
      {raw("<!DOCTYPE html>")}
      <html lang="en">
        <head>
          <meta charset="utf-8" />
          <meta name="viewport" content="width=device-width, initial-scale=1" />
          <title>{props.title} · stn</title>
          <link rel="icon" href="/ui/assets/favicon.svg" type="image/svg+xml" />
          <link rel="stylesheet" href="/ui/assets/style.css" />
          <script src="/ui/assets/htmx.min.js" defer></script>
          <script src="/ui/assets/app.js" defer></script>
        </head>
        <body>
          <a class="skip" href="#main">Skip to content</a>
          <header>
            <nav aria-label="Main">
              <a class="brand" href="/ui/runs">stn</a>
              {props.section === "login" ? null : (
                <ul>
                  {SECTIONS.map(([id, label]) => (
                    <li>
                      <a href={`/ui/${id}`} aria-current={id === props.section ? "page" : undefined}>
                        {label}
                      </a>
                    </li>
                  ))}
                </ul>
              )}
              {props.page.loggedIn
                ? (
                  <form method="post" action="/ui/logout" class="logout">
                    <button type="submit">Log out</button>
                  </form>
                )
                : null}
            </nav>
          </header>
          <main id="main" tabindex={-1}>
            <h1>{props.title}</h1>
            {props.children}
          </main>
        </body>
      </html>
    </>
  );
}
