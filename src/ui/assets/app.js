// The dashboard's own script: sends forms marked data-api to the JSON API, and follows a run's events
// over SSE. Everything else is server-rendered HTML (htmx refreshes the live parts).

/**
 * The API's error body as one line of text: the message, the first details the message does not already
 * say, and the hint — unless the hint is for a shell (it names a flag or an `stn` command), which a
 * browser user cannot follow.
 */
function errorText(body, status) {
  const e = body && body.error;
  if (!e) return `request failed (HTTP ${status})`;
  let text = e.message;
  const issues = e.details && (e.details.errors || e.details.issues);
  if (Array.isArray(issues)) {
    const more = issues.filter((i) => !e.message.includes(i.message)).slice(0, 5);
    if (more.length) text += " — " + more.map((i) => (i.path ? `${i.path}: ` : "") + i.message).join("; ");
  }
  const forShell = e.hint && /(^|[\s`(])(--[a-z]|stn )/.test(e.hint);
  return e.hint && !forShell ? `${text} (${e.hint})` : text;
}

/** A form's fields as the JSON body the API takes; the fields named in data-json are parsed. */
function jsonBody(form) {
  const data = {};
  for (const [name, value] of new FormData(form)) {
    if (value === "") continue;
    if ((form.dataset.json || "").split(" ").includes(name)) {
      try {
        data[name] = JSON.parse(value);
      } catch (err) {
        throw new Error(`${name} is not valid JSON: ${err.message}`);
      }
    } else data[name] = value;
  }
  return JSON.stringify(data);
}

document.addEventListener("submit", async (event) => {
  const form = event.target;
  if (!(form instanceof HTMLFormElement) || !form.dataset.api) return;
  event.preventDefault();
  const submitter = event.submitter;
  const url = (submitter && submitter.getAttribute("formaction")) || form.getAttribute("action");
  const alert = form.querySelector(".form-error");
  alert.textContent = "";
  const init = { method: form.dataset.api, headers: { accept: "application/json" } };
  try {
    if (form.enctype === "multipart/form-data") init.body = new FormData(form);
    else {
      init.body = jsonBody(form);
      init.headers["content-type"] = "application/json";
    }
  } catch (err) {
    alert.textContent = err.message;
    return;
  }
  if (submitter) submitter.disabled = true;
  try {
    const res = await fetch(url, init);
    const body = await res.json().catch(() => null);
    if (!res.ok) {
      alert.textContent = errorText(body, res.status);
      const stale = form.dataset.show && document.getElementById(form.dataset.show);
      if (stale) stale.textContent = "";
      return;
    }
    const shown = form.dataset.show && document.getElementById(form.dataset.show);
    if (shown) {
      shown.textContent = JSON.stringify(body.value, null, 2);
      return;
    }
    const then = form.dataset.then;
    location.assign(then ? then.replace("{id}", encodeURIComponent(body && body.id)) : location.href);
  } catch (err) {
    alert.textContent = `request failed: ${err.message}`;
  } finally {
    if (submitter) submitter.disabled = false;
  }
});

const TERMINAL = ["run_completed", "run_failed", "run_canceled"];

/** Follows a run's events (SSE, resumed by the browser with Last-Event-ID): each one is listed, and the live parts refresh. */
function followEvents(list) {
  const source = new EventSource(list.dataset.sse);
  const seen = new Set();
  let closing;
  source.onmessage = (message) => {
    const e = JSON.parse(message.data);
    if (seen.has(e.seq)) return;
    seen.add(e.seq);
    const item = document.createElement("li");
    const reused = e.data && e.data.reused ? " (reused)" : "";
    const line = `#${e.seq} ${e.time.slice(11, 19)} ${e.type}${e.step ? " · " + e.step : ""}${reused}`;
    const hasData = e.data !== null && e.data !== undefined &&
      !(typeof e.data === "object" && Object.keys(e.data).length === 0);
    if (hasData) {
      // The payload folds under its line: a run's log stays one line per event until you open one.
      const details = document.createElement("details");
      const summary = document.createElement("summary");
      const pre = document.createElement("pre");
      summary.textContent = line;
      pre.className = "json";
      pre.textContent = JSON.stringify(e.data, null, 2);
      pre.setAttribute("aria-label", `Data of event ${e.seq}`);
      details.append(summary, pre);
      item.append(details);
    } else item.textContent = line;
    list.append(item);
    document.body.dispatchEvent(new CustomEvent("run-event"));
    // Closed unless more follows soon: a retried run's log goes on after the terminal event it had.
    clearTimeout(closing);
    if (TERMINAL.includes(e.type)) closing = setTimeout(() => source.close(), 1000);
  };
  source.onerror = () => {
    if (source.readyState === EventSource.CLOSED) list.dataset.state = "closed";
  };
}

for (const list of document.querySelectorAll("[data-sse]")) followEvents(list);
