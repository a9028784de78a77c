/**
 * An MCP tool result as the one text a model reads: text blocks as they are, embedded text resources by
 * their text, binary content (images, audio, blobs) as a marker saying what was there, and structured
 * content as JSON when no text block already carries it (the spec asks servers to send both).
 */

/** One content block of a tool result (the fields stn reads). */
interface Block {
  type?: string;
  text?: string;
  data?: string;
  mimeType?: string;
  uri?: string;
  name?: string;
  resource?: { uri?: string; mimeType?: string; text?: string; blob?: string };
}

/** Bytes of base64 data, for markers. */
function base64Bytes(data: string | undefined): number {
  if (!data) return 0;
  const pad = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
  return Math.floor((data.length * 3) / 4) - pad;
}

function blockText(b: Block): string {
  switch (b.type) {
    case "text":
      return b.text ?? "";
    case "image":
    case "audio":
      return `[${b.type}: ${b.mimeType ?? "unknown type"}, ${base64Bytes(b.data)} bytes]`;
    case "resource":
      if (typeof b.resource?.text === "string") return b.resource.text;
      return `[resource: ${b.resource?.uri ?? "?"} (${b.resource?.mimeType ?? "binary"}, ${
        base64Bytes(b.resource?.blob)
      } bytes)]`;
    case "resource_link":
      return `[resource link: ${b.uri ?? "?"}${b.name ? ` (${b.name})` : ""}]`;
    default:
      return JSON.stringify(b);
  }
}

function sameJson(text: string, value: unknown): boolean {
  try {
    return JSON.stringify(JSON.parse(text)) === JSON.stringify(value);
  } catch {
    return false;
  }
}

/** The text of a tool result's `content` and `structuredContent` (and the legacy `toolResult`). */
export function resultText(
  result: { content?: unknown; structuredContent?: unknown; toolResult?: unknown },
): string {
  const blocks = Array.isArray(result.content) ? (result.content as Block[]) : [];
  const parts = blocks.map(blockText);
  const structured = result.structuredContent ?? result.toolResult;
  if (
    structured !== undefined && !blocks.some((b) => b.type === "text" && sameJson(b.text ?? "", structured))
  ) {
    parts.push(JSON.stringify(structured));
  }
  return parts.join("\n");
}
