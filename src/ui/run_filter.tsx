/** Where a run list lives: its page path and the query key of the name it filters by (workflow, agent). */
export interface RunListPage {
  path: string;
  key: string;
}

/** A run list's filter: one name (a workflow's id, an agent's name), a status, a page cursor. */
export interface RunFilter<S extends string> {
  name?: string;
  status?: S;
  cursor?: string;
}

/** The filter from a run list's query; an unknown status is ignored (the form offers the known ones). */
export function runFilter<S extends string>(
  list: RunListPage,
  q: Record<string, string>,
  statuses: readonly S[],
): RunFilter<S> {
  return {
    name: q[list.key] || undefined,
    status: statuses.find((s) => s === q.status),
    cursor: q.cursor || undefined,
  };
}

/** The filter as a query string ("" or "?…"), for the rows fragment and the older-runs link. */
export function runQuery<S extends string>(list: RunListPage, f: RunFilter<S>): string {
  const p = new URLSearchParams();
  if (f.name) p.set(list.key, f.name);
  if (f.status) p.set("status", f.status);
  if (f.cursor) p.set("cursor", f.cursor);
  const s = p.toString();
  return s ? `?${s}` : "";
}

/** The link to the next (older) page of a run list, when there is one. */
export function OlderRuns<S extends string>(
  props: { list: RunListPage; filter: RunFilter<S>; next: string | null; label: string },
) {
  return props.next
    ? (
      <a href={`${props.list.path}${runQuery(props.list, { ...props.filter, cursor: props.next })}`}>
        {props.label}
      </a>
    )
    : null;
}

function Choice(props: { id: string; label: string; values: readonly string[]; selected?: string }) {
  return (
    <div>
      <label for={props.id}>{props.label}</label>
      <select id={props.id} name={props.id}>
        <option value="">any</option>
        {props.values.map((v) => <option key={v} value={v} selected={v === props.selected}>{v}</option>)}
      </select>
    </div>
  );
}

/** A run list's filter form: the name and the status to show, each "any" by default. */
export function RunFilterForm<S extends string>(props: {
  list: RunListPage;
  filter: RunFilter<S>;
  label: string;
  nameLabel: string;
  names: readonly string[];
  statuses: readonly S[];
}) {
  return (
    <form method="get" action={props.list.path} class="filters" aria-label={props.label}>
      <Choice id={props.list.key} label={props.nameLabel} values={props.names} selected={props.filter.name} />
      <Choice id="status" label="Status" values={props.statuses} selected={props.filter.status} />
      <button type="submit">Filter</button>
    </form>
  );
}
