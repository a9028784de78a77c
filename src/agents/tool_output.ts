/** A tool's output as the model gets it: cut to a byte budget, with a marker saying how much was cut. */
export interface CutOutput {
  text: string;
  /** The output's full size in UTF-8 bytes. */
  bytes: number;
  truncated: boolean;
}

/** Bytes of a tool output the API, CLI, dashboard and events show unless asked for all of it (`?full=1`). */
export const TOOL_OUTPUT_DISPLAY_BYTES = 2048;

const encoder = new TextEncoder();
// Not fatal: a cut through a multi-byte character leaves one replacement mark, dropped below.
const decoder = new TextDecoder("utf-8");

/** Cuts `text` to at most `max` UTF-8 bytes and says so at the end (`agents.max_tool_output`). */
export function cutToolOutput(text: string, max: number): CutOutput {
  const bytes = encoder.encode(text);
  if (bytes.length <= max) return { text, bytes: bytes.length, truncated: false };
  const kept = decoder.decode(bytes.subarray(0, max)).replace(/\uFFFD$/, "");
  const keptBytes = encoder.encode(kept).length;
  return {
    text: `${kept}\n[output cut: ${bytes.length - keptBytes} of ${bytes.length} bytes not shown]`,
    bytes: bytes.length,
    truncated: true,
  };
}
