/** Where a run list lives: its page path and the query key of the name it filters by (workflow, agent). */
export interface RunListPage {
  path: string;
  key: string;
}

/**
 * A run list's filter: one name (a workflow's id, an agent's name), a status, a page cursor; the workflow
 * runs list also searches by run id and by creation time (`from`/`until`, UTC, as the form's
 * datetime-local fields send them).
 */
export interface RunFilter<S extends string> {
  name?: string;
  status?: S;
  cursor?: string;
  run?: string;
  from?: string;
  until?: string;
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
    run: q.run?.trim() || undefined,
    from: q.from || undefined,
    until: q.until || undefined,
  };
}

/** Whether the filter narrows the list at all (an empty list then says so, rather than "nothing yet"). */
export function filtered<S extends string>(f: RunFilter<S>): boolean {
  return Boolean(f.name || f.status || f.run || f.from || f.until);
}

/** A datetime-local value (no zone: read as UTC, as the dashboard shows times) in ms; undefined if not one. */
export function utcTime(value: string | undefined): number | undefined {
  if (!value) return undefined;
  const ms = Date.parse(/[zZ]|[+-]\d\d:\d\d$/.test(value) ? value : `${value}Z`);
  return Number.isNaN(ms) ? undefined : ms;
}

/** The filter as a query string ("" or "?…"), for the rows fragment and the older-runs link. */
export function runQuery<S extends string>(list: RunListPage, f: RunFilter<S>): string {
  const p = new URLSearchParams();
  if (f.name) p.set(list.key, f.name);
  if (f.status) p.set("status", f.status);
  if (f.run) p.set("run", f.run);
  if (f.from) p.set("from", f.from);
  if (f.until) p.set("until", f.until);
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

function Field(props: { id: string; label: string; type: string; value?: string; placeholder?: string }) {
  return (
    <div>
      <label for={props.id}>{props.label}</label>
      <input
        id={props.id}
        name={props.id}
        type={props.type}
        value={props.value}
        placeholder={props.placeholder}
      />
    </div>
  );
}

/**
 * A run list's filter form: the name and the status to show, each "any" by default; with `search`, also a
 * run id and a creation-time window.
 */
export function RunFilterForm<S extends string>(props: {
  list: RunListPage;
  filter: RunFilter<S>;
  label: string;
  nameLabel: string;
  names: readonly string[];
  statuses: readonly S[];
  search?: boolean;
}) {
  const f = props.filter;
  return (
    <form method="get" action={props.list.path} class="filters" aria-label={props.label}>
      {props.search ? <Field id="run" label="Run id" type="search" value={f.run} placeholder="01J…" /> : null}
      <Choice id={props.list.key} label={props.nameLabel} values={props.names} selected={f.name} />
      <Choice id="status" label="Status" values={props.statuses} selected={f.status} />
      {props.search
        ? (
          <>
            <Field id="from" label="Created from (UTC)" type="datetime-local" value={f.from} />
            <Field id="until" label="Created before (UTC)" type="datetime-local" value={f.until} />
          </>
        )
        : null}
      <button type="submit">{props.search ? "Search" : "Filter"}</button>
      {filtered(f) ? <a href={props.list.path}>Clear</a> : null}
    </form>
  );
}
