import type { Context, Hono } from "hono";
import type { StationContext } from "../../context.ts";
import { Layout, type PageContext } from "../layout.tsx";
import { ApiForm, ErrorBox, Status, Time } from "../parts.tsx";

/** /ui/sandboxes: open sandboxes (?all=1: closed ones too); closing one goes to the sandboxes API. */
export function addSandboxRoutes(ui: Hono, ctx: StationContext, page: (c: Context) => PageContext): void {
  ui.get("/sandboxes", (c) => {
    const all = c.req.query("all") === "1";
    const body = !ctx.sandbox
      ? (
        <ErrorBox title="Sandboxes are unavailable:">
          {ctx.sandboxUnavailable?.message ?? "sandboxes are disabled"} {ctx.sandboxUnavailable?.hint ?? ""}
        </ErrorBox>
      )
      : <SandboxTable sandboxes={ctx.sandbox.list(all)} />;
    return c.html(
      <Layout title="Sandboxes" section="sandboxes" page={page(c)}>
        <p>
          {all
            ? <a href="/ui/sandboxes">Show open sandboxes only</a>
            : <a href="/ui/sandboxes?all=1">Show closed sandboxes too</a>}
        </p>
        {body}
      </Layout>,
    );
  });
}

type Sandboxes = ReturnType<NonNullable<StationContext["sandbox"]>["list"]>;

function SandboxTable(props: { sandboxes: Sandboxes }) {
  if (props.sandboxes.length === 0) {
    return (
      <p class="muted">
        No sandboxes. Sandbox steps and agents open them as they run; <code>stn sandbox open</code>{" "}
        opens one by hand.
      </p>
    );
  }
  return (
    <table>
      <caption>Sandboxes</caption>
      <thead>
        <tr>
          <th scope="col">Sandbox</th>
          <th scope="col">Image</th>
          <th scope="col">Run</th>
          <th scope="col">Status</th>
          <th scope="col">Last used</th>
          <th scope="col">Actions</th>
        </tr>
      </thead>
      <tbody>
        {props.sandboxes.map((s) => (
          <tr>
            <td>
              <code>{s.id}</code>
            </td>
            <td>{s.image}</td>
            <td>{s.run_id ? <a href={`/ui/runs/${s.run_id}`}>{s.run_id}</a> : "—"}</td>
            <td>
              <Status status={s.status} />{" "}
              {s.close_reason ? <span class="muted">{s.close_reason}</span> : null}
            </td>
            <td>
              <Time iso={s.last_used_at} />
            </td>
            <td>
              {s.status === "open"
                ? (
                  <ApiForm
                    action={`/api/v1/sandboxes/${encodeURIComponent(s.id)}`}
                    method="DELETE"
                    class="inline"
                    label={`Close sandbox ${s.id}`}
                  >
                    <button type="submit" class="danger" aria-label={`Close sandbox ${s.id}`}>Close</button>
                  </ApiForm>
                )
                : null}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
