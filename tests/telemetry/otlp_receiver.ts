/** One span as an OTLP/JSON export carries it, with its attributes flattened. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  /** The span's status: code 2 is an error, with its message. */
  status: { code?: number; message?: string };
}

/** A real OTLP/HTTP receiver (JSON encoding) on a free port: keeps every span exported to /v1/traces. */
export interface OtlpReceiver {
  url: string;
  spans: ReceivedSpan[];
  close(): Promise<void>;
}

type AnyValue = {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
};

function valueOf(v: AnyValue): unknown {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  return v.boolValue ?? v.doubleValue;
}

/** Starts the receiver; logs and metrics posts are accepted and dropped. */
export function startOtlpReceiver(): OtlpReceiver {
  const spans: ReceivedSpan[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const body = await req.json().catch(() => ({}));
    if (new URL(req.url).pathname === "/v1/traces") {
      for (const rs of body.resourceSpans ?? []) {
        for (const ss of rs.scopeSpans ?? []) {
          for (const s of ss.spans ?? []) {
            spans.push({
              traceId: s.traceId,
              spanId: s.spanId,
              parentSpanId: s.parentSpanId ?? "",
              name: s.name,
              kind: s.kind,
              status: s.status ?? {},
              attributes: Object.fromEntries(
                (s.attributes ?? []).map((a: { key: string; value: AnyValue }) => [a.key, valueOf(a.value)]),
              ),
            });
          }
        }
      }
    }
    return Response.json({});
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    spans,
    close: () => server.shutdown(),
  };
}
