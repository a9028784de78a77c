import { assert } from "./helpers/assert.ts";
import { configKeys } from "../src/config/load.ts";

const README = Deno.readTextFileSync(new URL("../README.md", import.meta.url));

Deno.test("README: the configuration table lists every config key with its env variable", () => {
  for (const key of configKeys()) {
    const row = README.split("\n").find((l) => new RegExp(`^\\| *\`${key.path}\` *\\|`).test(l));
    assert(row, `README is missing a Configuration row for ${key.path}`);
    assert(row.includes(key.env[0]), `README row for ${key.path} should name ${key.env[0]}`);
  }
});

Deno.test("README: names the run and test commands that exist", () => {
  for (const cmd of ["scripts/stn", "scripts/test"]) {
    assert(README.includes(cmd), `README should name ${cmd}`);
    assert(Deno.statSync(new URL(`../${cmd}`, import.meta.url)).isFile);
  }
});
