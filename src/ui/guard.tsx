/** The dashboard's guard: open on loopback, else a session cookie from its login page. */

import type { Hono, MiddlewareHandler } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { secretEqual } from "../lib/secret_equal.ts";
import { newSession, SESSION_COOKIE, SESSION_TTL_MS, validSession } from "../lib/session.ts";
import { Layout } from "./layout.tsx";
import { ErrorBox } from "./parts.tsx";

/** Pages anyone may open: the login page and the static assets. */
const isOpen = (path: string) => path === "/ui/login" || path.startsWith("/ui/assets/");

/** The path and query of a URL (empty when it is not one). */
function pathOf(url: string): string {
  try {
    const u = new URL(url);
    return u.pathname + u.search;
  } catch {
    return "";
  }
}

/** Where to go after logging in: only a dashboard path (never another site). */
function safeNext(next: string | undefined): string {
  return next && /^\/ui(\/|$)/.test(next) && !next.startsWith("//") ? next : "/ui/runs";
}

/**
 * The dashboard's guard: with no token required (a loopback server) every page is open; otherwise a
 * valid session cookie is, and a browser without one is sent to the login page.
 */
export function dashboardGuard(token: string | undefined): MiddlewareHandler {
  return async (c, next) => {
    if (!token || isOpen(c.req.path) || validSession(token, getCookie(c, SESSION_COOKIE))) {
      return await next();
    }
    if (c.req.method !== "GET") return c.text("log in first: /ui/login", 401);
    const url = new URL(c.req.url);
    // A live part refreshing itself (htmx) after the session ended sends the whole page to the login.
    const page = c.req.header("hx-request") ? (c.req.header("hx-current-url") ?? "") : url.href;
    const login = `/ui/login?next=${encodeURIComponent(pathOf(page))}`;
    return c.req.header("hx-request") ? c.body(null, 401, { "hx-redirect": login }) : c.redirect(login, 303);
  };
}

function LoginPage(props: { next: string; failed?: boolean }) {
  return (
    <Layout title="Log in" section="login" page={{ loggedIn: false }}>
      <p>This server is reachable beyond loopback, so the dashboard asks for its API token.</p>
      {props.failed ? <ErrorBox title="Not logged in:">that is not this server's API token.</ErrorBox> : null}
      <form method="post" action="/ui/login">
        <input type="hidden" name="next" value={props.next} />
        <div class="field">
          <label for="token">API token</label>
          <input id="token" name="token" type="password" autocomplete="current-password" required autofocus />
        </div>
        <button type="submit">Log in</button>
      </form>
    </Layout>
  );
}

/** The login and logout routes: the token is checked once and exchanged for an HttpOnly session cookie. */
export function addLoginRoutes(ui: Hono, token: string | undefined): void {
  ui.get("/login", (c) => {
    const next = safeNext(c.req.query("next"));
    return token ? c.html(<LoginPage next={next} />) : c.redirect(next, 303);
  });
  ui.post("/login", async (c) => {
    const form = await c.req.parseBody();
    const next = safeNext(typeof form.next === "string" ? form.next : undefined);
    if (!token) return c.redirect(next, 303);
    if (typeof form.token !== "string" || !secretEqual(form.token.trim(), token)) {
      return c.html(<LoginPage next={next} failed />, 401);
    }
    setCookie(c, SESSION_COOKIE, newSession(token), {
      httpOnly: true,
      sameSite: "Strict",
      path: "/",
      secure: new URL(c.req.url).protocol === "https:",
      maxAge: SESSION_TTL_MS / 1000,
    });
    return c.redirect(next, 303);
  });
  ui.post("/logout", (c) => {
    deleteCookie(c, SESSION_COOKIE, { path: "/" });
    return c.redirect(token ? "/ui/login" : "/ui/runs", 303);
  });
}
