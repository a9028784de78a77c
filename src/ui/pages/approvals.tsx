import type { Context, Hono } from "hono";
import type { StationContext } from "../../context.ts";
import { Layout, type PageContext } from "../layout.tsx";
import { Status, Time } from "../parts.tsx";
import { DecisionForm } from "./approval_form.tsx";

/** /ui/approvals: the pending approvals with their decision forms, then the decided ones. */
export function addApprovalRoutes(ui: Hono, ctx: StationContext, page: (c: Context) => PageContext): void {
  ui.get("/approvals", (c) => {
    const all = ctx.runs.approvals({});
    const pending = all.filter((a) => a.status === "pending");
    const decided = all.filter((a) => a.status !== "pending").reverse().slice(0, 50);
    return c.html(
      <Layout title="Approvals" section="approvals" page={page(c)}>
        <h2>Pending ({pending.length})</h2>
        {pending.length === 0
          ? (
            <p class="muted">
              Nothing is waiting for a decision. A run asks here when it reaches a <code>human_approval</code>
              {" "}
              step; <code>stn workflow approvals list</code> shows the same from a shell.
            </p>
          )
          : null}
        {pending.map((a) => (
          <section class="approval" aria-label={`Approval ${a.id}`}>
            <h3>
              {a.message}
            </h3>
            <p class="muted">
              Step <code>{a.step_id}</code> of run <a href={`/ui/runs/${a.run_id}`}>{a.run_id}</a>
              {a.approvers.length ? ` · approvers: ${a.approvers.join(", ")}` : ""} · times out{" "}
              <Time iso={a.timeout_at} />
            </p>
            <DecisionForm approval={a} />
          </section>
        ))}
        <h2>Decided</h2>
        {decided.length === 0 ? <p class="muted">No decisions yet.</p> : (
          <table>
            <caption>The latest decisions, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Message</th>
                <th scope="col">Run</th>
                <th scope="col">Decision</th>
                <th scope="col">By</th>
                <th scope="col">Comment</th>
                <th scope="col">When</th>
              </tr>
            </thead>
            <tbody>
              {decided.map((a) => (
                <tr>
                  <td>{a.message}</td>
                  <td>
                    <a href={`/ui/runs/${a.run_id}`}>
                      <code>{a.run_id}</code>
                    </a>
                  </td>
                  <td>
                    <Status status={a.status} />
                  </td>
                  <td>{a.decided_by ?? "—"}</td>
                  <td>{a.comment ?? ""}</td>
                  <td>
                    <Time iso={a.decided_at} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Layout>,
    );
  });
}
