import { contentTypeFor } from "../../src/files/content_type.ts";
import { assertEquals } from "../helpers/assert.ts";

Deno.test("content types: the extension decides, without a charset; no or an unknown extension is octet-stream", () => {
  const cases: [string, string][] = [
    ["runs/r1/output/data.csv", "text/csv"],
    ["report.HTML", "text/html"],
    ["photo.jpeg", "image/jpeg"],
    ["main.ts", "text/plain"],
    ["flow.workflow.yaml", "application/yaml"],
    ["events.ndjson", "application/x-ndjson"],
    ["table.parquet", "application/vnd.apache.parquet"],
    ["archive.tar", "application/x-tar"],
    ["files/.env", "application/octet-stream"],
    ["dir.d/README", "application/octet-stream"],
    ["blob.xyz", "application/octet-stream"],
  ];
  assertEquals(cases.map(([name]) => [name, contentTypeFor(name)]), cases);
});
