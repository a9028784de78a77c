/** The API's own headers: names and forms, without the routes' schemas (the CLI's client reads these). */

/** The request header that makes a run start idempotent (lowercase, as Hono's validator reads it). */
export const IDEMPOTENCY_KEY_HEADER = "idempotency-key";
/** The answer header that marks a replay: the run the key started before, nothing new started. */
export const REPLAYED_HEADER = "Idempotent-Replayed";

/** What an Idempotency-Key may be: 1-255 visible ASCII characters (a UUID, a CI job id, `nightly-2026-11-26`). */
export const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/** The header carrying variable values for a bundle install: a JSON object NAME → value (kept out of the URL). */
export const BUNDLE_VARIABLES_HEADER = "x-bundle-variables";
