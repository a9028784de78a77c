import { Layout, type PageContext } from "./layout.tsx";
import { ErrorBox } from "./parts.tsx";

/** A page for an error (a run that does not exist, a part that is down): the code, message and hint. */
export function errorPage(page: PageContext, { status, code, message, hint }: PageError) {
  return (
    <Layout title={status === 404 ? "Not found" : "Something went wrong"} section="error" page={page}>
      <ErrorBox title={`${code}:`}>{message}</ErrorBox>
      {hint ? <p>{hint}</p> : null}
      <p>
        <a href="/ui/runs">Back to the runs</a>
      </p>
    </Layout>
  );
}

/** What an error page shows (a StationError is one). */
export interface PageError {
  status: number;
  code: string;
  message: string;
  hint?: string;
}
