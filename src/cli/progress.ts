import { formatBytes } from "../files/size.ts";

const enc = new TextEncoder();

/**
 * A byte-counting pass-through that draws a progress bar on stderr. It draws only when stderr is a
 * terminal and the transfer is large enough to be worth watching; otherwise it just passes bytes on.
 */
export function progressBar(label: string, total: number | undefined, minBytes = 1024 * 1024) {
  const show = Deno.stderr.isTerminal() && total !== undefined && total > minBytes;
  let done = 0;
  let last = 0;
  const started = performance.now();
  const draw = (final: boolean) => {
    const now = performance.now();
    if (!final && now - last < 100) return;
    last = now;
    const ratio = total ? Math.min(1, done / total) : 1;
    const width = 30;
    const filled = Math.round(ratio * width);
    const rate = done / Math.max(0.001, (now - started) / 1000);
    const line = `\r${label} [${"#".repeat(filled)}${".".repeat(width - filled)}] ${
      Math.floor(ratio * 100)
    }% ${formatBytes(done)}/${formatBytes(total ?? done)} ${formatBytes(Math.round(rate))}/s`;
    Deno.stderr.writeSync(enc.encode(line + "\x1b[K" + (final ? "\n" : "")));
  };
  return new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      done += chunk.length;
      if (show) draw(false);
      controller.enqueue(chunk);
    },
    flush() {
      if (show) draw(true);
    },
  });
}
