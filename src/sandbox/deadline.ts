import { within } from "../lib/async.ts";
import { sandboxTimeout } from "./errors.ts";

/**
 * Waits for one Docker Engine call at most ms; past that the request fails with 504 sandbox_timeout
 * instead of hanging. A late answer is handed to dispose (e.g. to close a stream nobody will read).
 */
export async function deadline<T>(
  promise: Promise<T>,
  ms: number,
  what: string,
  dispose?: (late: T) => void,
): Promise<T> {
  let late = false;
  try {
    return await within(promise, ms, () => {
      late = true;
      throw sandboxTimeout(what, ms);
    });
  } finally {
    if (late && dispose) promise.then(dispose, () => {});
  }
}
