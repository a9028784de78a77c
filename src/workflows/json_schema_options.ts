/** The options of the workflows' one Ajv, shared with the script that compiles its meta-schema ahead of time. */

/**
 * The options of the workflows' Ajv (scripts/json_schema_meta.ts compiles the meta-schema with them).
 * strictSchema rejects unknown keywords, so a misspelt `requried` is an error rather than ignored;
 * useDefaults fills the input's missing fields from the schema's defaults; addUsedSchema off keeps two
 * workflows whose schemas share an `$id` from colliding in Ajv's registry.
 */
export const AJV_OPTIONS = {
  strict: false,
  addUsedSchema: false,
  strictSchema: true,
  validateFormats: false,
  allErrors: true,
  useDefaults: true,
} as const;

/** The meta-schema of schemas without a `$schema` of their own. */
export const META_SCHEMA = "https://json-schema.org/draft/2020-12/schema";
