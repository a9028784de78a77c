import { assertEquals } from "../helpers/assert.ts";
import { answerModules, ANSWERS_DIR } from "../../scripts/client_answers.ts";

Deno.test("src/client/answers/ is what scripts/client_answers.ts writes (deno task docs writes it)", async () => {
  const files = await answerModules();
  const present = [...Deno.readDirSync(ANSWERS_DIR)].map((e) => e.name).sort();
  assertEquals(present, [...files.keys()].sort());
  for (const [name, text] of files) {
    assertEquals(Deno.readTextFileSync(new URL(name, ANSWERS_DIR)) === text, true, `${name} is not current`);
  }
});
