import type { Attributes, Context, Span, SpanContext, SpanKind as OtelSpanKind } from "@opentelemetry/api";
import { VERSION } from "../version.ts";
import { useTraceIds } from "../log.ts";

/**
 * Spans through Deno's built-in OpenTelemetry (docs/observability.md says why not the JS SDK): with
 * `OTEL_DENO=true` the runtime registers a tracer provider, a context manager and an OTLP exporter behind
 * `@opentelemetry/api`, configured by the usual `OTEL_*` variables. Without it every helper here calls
 * its function straight away: no span objects, no context switches.
 */
export const tracingEnabled = Deno.env.get("OTEL_DENO") === "true"; // the only value Deno takes for on

// Loaded only when tracing is on: a CommonJS package that costs ~20 ms of every station start to load
// (docs/benchmarks.md, the one-shot); every use below is behind `tracingEnabled`.
const otel = tracingEnabled ? await import("@opentelemetry/api") : undefined;
const tracer = otel?.trace.getTracer("stn", VERSION);

/** The span kinds stn sets (OpenTelemetry's SpanKind values), without loading the API. */
export const SpanKind = { SERVER: 1 as OtelSpanKind } as const;

export type { Span };

/** Options of a span: its kind and, for work picked up from elsewhere, the W3C traceparent to continue. */
export interface SpanOptions {
  kind?: OtelSpanKind;
  /** Continue this trace (a stored or received `traceparent`) instead of the active context. */
  parent?: string | null;
}

/**
 * Runs fn inside a span named `name` (ended when fn settles; a throw marks it failed). fn gets the span,
 * or undefined when tracing is off.
 */
export function inSpan<T>(
  name: string,
  attributes: Attributes,
  fn: (span?: Span) => Promise<T>,
  options: SpanOptions = {},
): Promise<T> {
  if (!otel || !tracer) return fn();
  const parent = options.parent !== undefined ? fromTraceparent(options.parent) : otel.context.active();
  return tracer.startActiveSpan(name, { kind: options.kind, attributes }, parent, async (span) => {
    try {
      return await fn(span);
    } catch (err) {
      failSpan(span, err as Error);
      throw err;
    } finally {
      span.end();
    }
  });
}

/**
 * Records the span of a run started by an event (a child of the active span, the event's request) and returns
 * its traceparent for the run to store; undefined when tracing is off.
 */
export function startedRunSpan(workflowId: string, runId: string): string | undefined {
  if (!tracer) return undefined;
  const span = tracer.startSpan(`workflow.run ${workflowId}`, {
    attributes: { "stn.run.id": runId, "stn.workflow.id": workflowId },
  });
  span.end();
  return toTraceparent(span.spanContext());
}

/** Marks a span failed with an error's message (an error answered as an outcome, not thrown). */
export function failSpan(span: Span | undefined, err: { message: string; code?: string }): void {
  if (!span) return;
  span.setStatus({ code: otel!.SpanStatusCode.ERROR, message: err.message });
  if (err.code) span.setAttribute("stn.error.code", err.code);
}

/** The active span's trace id, for log lines; undefined when tracing is off or no span is active. */
export function currentTraceId(): string | undefined {
  return otel?.trace.getActiveSpan()?.spanContext().traceId;
}

if (tracingEnabled) useTraceIds(currentTraceId);

/** The active span as a W3C traceparent (what a run stores to continue its trace), if one is active. */
export function currentTraceparent(): string | undefined {
  const sc = otel?.trace.getActiveSpan()?.spanContext();
  return sc && otel!.trace.isSpanContextValid(sc) ? toTraceparent(sc) : undefined;
}

function toTraceparent(sc: SpanContext): string {
  return `00-${sc.traceId}-${sc.spanId}-${(sc.traceFlags & otel!.TraceFlags.SAMPLED) ? "01" : "00"}`;
}

/** The trace id of a W3C traceparent (`stn workflow inspect --trace`). */
export function traceIdOf(traceparent: string | null | undefined): string | null {
  return parseTraceparent(traceparent)?.[1] ?? null;
}

function parseTraceparent(tp: string | null | undefined): RegExpExecArray | null {
  return tp ? /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(tp) : null;
}

/** A context whose (remote) parent is the span a traceparent names; the root context when there is none. */
function fromTraceparent(tp: string | null): Context {
  const { ROOT_CONTEXT, trace } = otel!;
  const m = parseTraceparent(tp);
  if (!m) return ROOT_CONTEXT;
  return trace.setSpanContext(ROOT_CONTEXT, {
    traceId: m[1],
    spanId: m[2],
    traceFlags: parseInt(m[3], 16),
    isRemote: true,
  });
}

/**
 * Wraps the named async methods of a class in spans `<prefix>.<method>`, the first argument (a session id,
 * a file key) as the `attribute`. Done only when tracing is on, so the methods are untouched otherwise.
 */
export function traceMethods<T extends object>(
  cls: { prototype: T },
  prefix: string,
  attribute: string,
  names: (keyof T & string)[],
): void {
  if (!tracingEnabled) return;
  const proto = cls.prototype as Record<string, (...args: unknown[]) => Promise<unknown>>;
  for (const name of names) {
    const method = proto[name];
    proto[name] = function (this: unknown, ...args: unknown[]) {
      const attributes = typeof args[0] === "string" ? { [attribute]: args[0] } : {};
      return inSpan(`${prefix}.${name}`, attributes, () => method.apply(this, args));
    };
  }
}
