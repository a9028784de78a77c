import meta from "../deno.json" with { type: "json" };

/** stn's version, from deno.json (imported as a module so `deno compile` embeds it). */
export const VERSION: string = meta.version;
