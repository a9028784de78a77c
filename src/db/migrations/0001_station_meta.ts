/** The ledger's own facts (when it was created). */

import type { Migration } from "../migrate.ts";

export default {
  version: 1,
  name: "station_meta",
  sql: `
    CREATE TABLE station_meta (
      key TEXT PRIMARY KEY,
      value TEXT NOT NULL
    );
    INSERT INTO station_meta (key, value) VALUES ('created_at', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));
  `,
} satisfies Migration;
