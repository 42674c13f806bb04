import { context, SpanKind, SpanStatusCode, trace, type Attributes, type Span, type Tracer } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import type { TracingConfig } from '../config';

/**
 * The gateway's tracer. With tracing off (the default) nothing is registered and `span`
 * runs the work directly: no span objects, no context switches.
 */
export interface Tracing {
  readonly enabled: boolean;
  readonly tracer: Tracer;
  /** Flushes the spans still queued and unregisters the provider. */
  shutdown(): Promise<void>;
}

const TRACER_NAME = 'agent-session-gateway';

/** Registers the SDK with an OTLP/HTTP (JSON) exporter when the OTEL_* configuration asks for it. */
export function startTracing(config: TracingConfig): Tracing {
  if (!config.enabled) return { enabled: false, tracer: trace.getTracer(TRACER_NAME), shutdown: async () => undefined };
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': config.serviceName }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: config.tracesUrl, headers: { ...config.headers } }))],
  });
  // Also installs the AsyncLocalStorage context manager: a span started inside another's work is its child.
  provider.register();
  return {
    enabled: true,
    tracer: provider.getTracer(TRACER_NAME),
    async shutdown() {
      await provider.shutdown();
      trace.disable();
      context.disable();
    },
  };
}

/** Runs `work` inside a span (the current one's child); a thrown error marks the span and passes on. */
export async function inSpan<T>(tracing: Tracing, name: string, attributes: Attributes, work: (span: Span | null) => Promise<T>, kind = SpanKind.INTERNAL): Promise<T> {
  if (!tracing.enabled) return work(null);
  return tracing.tracer.startActiveSpan(name, { kind, attributes }, async (span) => {
    try {
      return await work(span);
    } catch (e) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: e instanceof Error ? e.name : 'error' });
      throw e;
    } finally {
      span.end();
    }
  });
}
