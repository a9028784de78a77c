import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import { startTestStation } from "../helpers/station.ts";
import { newSession, SESSION_TTL_MS, validSession } from "../../src/lib/session.ts";

const TOKEN = "dashboard-test-token-0123456789";
const WORKFLOW = JSON.stringify({ id: "w", states: [{ id: "a", type: "inject", data: {} }] });

Deno.test("session values: made with the token, refused with another, after expiry, or altered", () => {
  const now = Date.parse("2026-01-01T00:00:00Z");
  const value = newSession(TOKEN, now);
  assert(!value.includes(TOKEN), "the cookie never carries the token");
  assert(validSession(TOKEN, value, now + 1000));
  assert(!validSession("another-token-entirely", value, now + 1000));
  assert(!validSession(TOKEN, value, now + SESSION_TTL_MS + 1));
  assert(!validSession(TOKEN, value.replace(/^\d+/, String(now + 2 * SESSION_TTL_MS)), now + 1000));
  assert(!validSession(TOKEN, undefined, now));
  assert(!validSession(TOKEN, "garbage", now));
});

Deno.test("off loopback the dashboard asks for the token once and keeps an HttpOnly SameSite cookie the API accepts", async () => {
  const ts = await startTestStation({ configYaml: `server:\n  host: 0.0.0.0\n  api_token: ${TOKEN}\n` });
  try {
    const url = ts.station.url;
    const get = (path: string, cookie?: string) =>
      fetch(url + path, { redirect: "manual", headers: cookie ? { cookie } : {} });

    const anonymous = await get("/ui/runs?status=failed");
    assertEquals(anonymous.status, 303);
    assertEquals(anonymous.headers.get("location"), "/ui/login?next=%2Fui%2Fruns%3Fstatus%3Dfailed");
    // A live part polling after the session ended (htmx) is told to send its page to the login.
    const poll = await fetch(`${url}/ui/runs/rows`, {
      headers: { "hx-request": "true", "hx-current-url": `${url}/ui/runs?workflow=w` },
    });
    assertEquals([poll.status, poll.headers.get("hx-redirect")], [
      401,
      "/ui/login?next=%2Fui%2Fruns%3Fworkflow%3Dw",
    ]);
    assertEquals((await get("/ui/assets/style.css")).status, 200);
    const login = await get("/ui/login");
    assertMatch(await login.text(), /<label for="token">API token<\/label>/);
    assertEquals((await get("/api/v1/workflows")).status, 401);

    const post = (form: Record<string, string>) =>
      fetch(`${url}/ui/login`, { method: "POST", body: new URLSearchParams(form), redirect: "manual" });
    const wrong = await post({ token: "not-it", next: "/ui/files" });
    assertEquals(wrong.status, 401);
    assertEquals(wrong.headers.get("set-cookie"), null);
    assertMatch(await wrong.text(), /not this server&#39;s API token/);
    // Only a dashboard path is followed after login, never another site.
    assertEquals(
      (await post({ token: TOKEN, next: "//evil.example/x" })).headers.get("location"),
      "/ui/runs",
    );

    const ok = await post({ token: TOKEN, next: "/ui/files" });
    assertEquals(ok.status, 303);
    assertEquals(ok.headers.get("location"), "/ui/files");
    const setCookie = ok.headers.get("set-cookie") ?? "";
    assertMatch(setCookie, /^stn_session=\d+\.[\w-]+; Max-Age=43200; Path=\/; HttpOnly; SameSite=Strict$/);
    assert(!setCookie.includes(TOKEN));
    const cookie = setCookie.split(";")[0];

    assertEquals((await get("/ui/runs", cookie)).status, 200);
    assertEquals((await get("/api/v1/workflows", cookie)).status, 200);
    const forged = cookie.replace(/.$/, (ch) => (ch === "A" ? "B" : "A"));
    assertEquals((await get("/ui/runs", forged)).status, 303);
    assertEquals((await get("/api/v1/workflows", forged)).status, 401);

    // The cookie changes nothing from another site; from the dashboard's own pages it does.
    const create = (headers: Record<string, string>) =>
      fetch(`${url}/api/v1/workflows`, {
        method: "POST",
        headers: { cookie, "content-type": "application/json", ...headers },
        body: WORKFLOW,
      });
    const crossSite = await create({ "sec-fetch-site": "cross-site", origin: "https://evil.example" });
    assertEquals(crossSite.status, 403);
    assertEquals((await crossSite.json()).error.code, "cross_site_request");
    assertEquals((await create({ origin: "https://evil.example" })).status, 403);
    assertEquals((await create({ "sec-fetch-site": "same-origin", origin: url })).status, 201);

    const out = await fetch(`${url}/ui/logout`, { method: "POST", headers: { cookie }, redirect: "manual" });
    assertEquals(out.headers.get("location"), "/ui/login");
    assertMatch(out.headers.get("set-cookie") ?? "", /^stn_session=; Max-Age=0; Path=\//);
  } finally {
    await ts.close();
  }
});

Deno.test("on loopback the dashboard is open, and the open API still refuses other sites' browsers", async () => {
  const ts = await startTestStation();
  try {
    const url = ts.station.url;
    assertEquals((await fetch(`${url}/ui/runs`)).status, 200);
    const login = await fetch(`${url}/ui/login?next=/ui/files`, { redirect: "manual" });
    assertEquals([login.status, login.headers.get("location")], [303, "/ui/files"]);
    const send = (headers: Record<string, string>) =>
      fetch(`${url}/api/v1/workflows`, {
        method: "POST",
        headers: { "content-type": "text/plain", ...headers },
        body: WORKFLOW,
      });
    // A page elsewhere can post a simple form to 127.0.0.1 without CORS; the browser says where it came from.
    const forged = await send({ "sec-fetch-site": "cross-site", origin: "https://evil.example" });
    assertEquals(forged.status, 403);
    assertEquals((await forged.json()).error.code, "cross_site_request");
    // Programs send no Origin: the CLI, curl and webhook senders are unaffected.
    assertEquals((await send({})).status, 201);
  } finally {
    await ts.close();
  }
});
