/** Small parts every dashboard page uses: status badges, times, forms sent to the JSON API. */

import type { Child } from "hono/jsx";

/** A status as a labelled badge (colour is never the only signal: the word is always there). */
export function Status(props: { status: string }) {
  return <span class={`status status-${props.status}`}>{props.status}</span>;
}

/** An ISO time as a <time> element, shown as date and time (UTC). */
export function Time(props: { iso: string | null }) {
  if (!props.iso) return <span class="muted">—</span>;
  return <time datetime={props.iso}>{props.iso.replace("T", " ").replace(/\.\d+Z$|Z$/, "")}</time>;
}

/** Milliseconds as a short human duration. */
export function formatDuration(ms: number | null): string {
  if (ms === null) return "—";
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const m = Math.floor(ms / 60_000);
  return m < 60 ? `${m} min ${Math.round((ms % 60_000) / 1000)} s` : `${Math.floor(m / 60)} h ${m % 60} min`;
}

/** The time between two ISO times (to now when the end is missing), or null before the start. */
export function span(start: string | null, end: string | null, now = Date.now()): number | null {
  if (!start) return null;
  return (end ? Date.parse(end) : now) - Date.parse(start);
}

/** A JSON value, pretty-printed in a scrollable block with an accessible name. */
export function Json(props: { value: unknown; label: string }) {
  return (
    <pre
      class="json"
      tabindex={0}
      aria-label={props.label}
    >{JSON.stringify(props.value ?? null, null, 2)}</pre>
  );
}

/** An error box (role=alert so screen readers announce it). */
export function ErrorBox(props: { title?: string; children?: Child }) {
  return (
    <div class="error" role="alert">
      {props.title ? <strong>{props.title}</strong> : null} {props.children}
    </div>
  );
}

/** A step or run error: its code, message and step. */
export function StepErrorText(props: { error: { code: string; message: string; step?: string } | null }) {
  if (!props.error) return null;
  return (
    <span class="error-text">
      <code>{props.error.code}</code> {props.error.message}
    </span>
  );
}

/**
 * A form the dashboard's script sends to the JSON API (src/ui/assets/app.js): the API does the work and
 * answers errors in its usual shape, which the form's alert region shows. `json` names a field sent as
 * parsed JSON; `then` is where to go afterwards (`{id}` is the answer's id), else the page reloads.
 */
export function ApiForm(
  props: {
    action: string;
    method?: "POST" | "DELETE";
    json?: string;
    then?: string;
    /** The id of an element that shows the answer's `value` instead of reloading the page. */
    show?: string;
    multipart?: boolean;
    label?: string;
    class?: string;
    children?: Child;
  },
) {
  return (
    <form
      action={props.action}
      method="post"
      class={props.class}
      aria-label={props.label}
      enctype={props.multipart ? "multipart/form-data" : undefined}
      data-api={props.method ?? "POST"}
      data-json={props.json}
      data-then={props.then}
      data-show={props.show}
    >
      {props.children}
      <div class="form-error" role="alert" aria-live="assertive"></div>
    </form>
  );
}

/** Percent-encodes each segment of a key or path (they contain "/"). */
export function encodePath(key: string): string {
  return key.split("/").map(encodeURIComponent).join("/");
}
