/** Asking on the terminal for a value that must not show on the screen (a secret), as `sudo` does. */

import { StationError } from "../errors.ts";

const encoder = new TextEncoder();

/**
 * Reads one line from the terminal without echoing it: the terminal is put in raw mode for the read
 * (Backspace edits, Enter ends, Ctrl-C or Ctrl-D cancels) and restored after, whatever happens.
 */
export async function readHidden(question: string): Promise<string> {
  await Deno.stderr.write(encoder.encode(`${question} `));
  const bytes: number[] = [];
  const one = new Uint8Array(1);
  Deno.stdin.setRaw(true);
  try {
    while (true) {
      if (await Deno.stdin.read(one) === null) break;
      const b = one[0];
      if (b === 3 || b === 4) throw new StationError("canceled", "canceled at the prompt");
      if (b === 13 || b === 10) break;
      if (b === 127 || b === 8) bytes.pop();
      else bytes.push(b);
    }
  } finally {
    Deno.stdin.setRaw(false);
    await Deno.stderr.write(encoder.encode("\n"));
  }
  return new TextDecoder().decode(new Uint8Array(bytes));
}
