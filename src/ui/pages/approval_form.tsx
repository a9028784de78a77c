import type { ApprovalView } from "../../workflows/engine/mod.ts";
import { ApiForm } from "../parts.tsx";

/** Approve or reject a pending approval with an optional comment (POST …/approve or …/reject). */
export function DecisionForm(props: { approval: ApprovalView }) {
  const a = props.approval;
  const base = `/api/v1/workflow-approvals/${encodeURIComponent(a.id)}`;
  return (
    <ApiForm action={`${base}/approve`} label={`Decide approval ${a.id}`} class="decision">
      <div class="field">
        <label for={`actor-${a.id}`}>Your name</label>
        <input id={`actor-${a.id}`} name="actor" autocomplete="username" />
      </div>
      <div class="field">
        <label for={`comment-${a.id}`}>Comment</label>
        <textarea id={`comment-${a.id}`} name="comment" rows={2}></textarea>
      </div>
      <div class="actions">
        <button type="submit" formaction={`${base}/approve`}>Approve</button>
        <button type="submit" class="danger" formaction={`${base}/reject`}>Reject</button>
      </div>
    </ApiForm>
  );
}
