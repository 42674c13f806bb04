import type { ApolloServerPlugin } from '@apollo/server';
import { SpanKind, SpanStatusCode, context, trace } from '@opentelemetry/api';
import { getOperationAST } from 'graphql';
import type { OperationObserver } from '../server/live-operations';
import type { RequestHandler } from 'express';
import type { GatewayMetrics, OperationNames } from './metrics';
import type { Tracing } from './tracing';

/** Routes as a label: a fixed list, so a scan of random paths adds no series. */
const ROUTES: readonly [RegExp, string][] = [
  [/^\/graphql\/stream\/?$/, '/graphql/stream'],
  [/^\/graphql\/?$/, '/graphql'],
  [/^\/api\/ai\/agent\/execute\/?$/, '/api/ai/agent/execute'],
  [/^\/blobs\//, '/blobs'],
  [/^\/dashboard(\/|$)/, '/dashboard'],
  [/^\/metrics\/?$/, '/metrics'],
  [/^\/healthz\/?$/, '/healthz'],
  [/^\/readyz\/?$/, '/readyz'],
];
const METHODS = new Set(['GET', 'POST', 'PUT', 'DELETE', 'HEAD', 'OPTIONS', 'PATCH']);

export const routeOf = (path: string): string => ROUTES.find(([pattern]) => pattern.test(path))?.[1] ?? 'other';

/**
 * Counts and times every HTTP request by method, route and status; with tracing on, runs the
 * request inside a server span, so the GraphQL operation (which names it) and its SQL
 * statements belong to it.
 */
export function httpInstrumentation(metrics: GatewayMetrics, tracing: Tracing): RequestHandler {
  return (req, res, next) => {
    const startedAt = performance.now();
    const method = req.method !== undefined && METHODS.has(req.method) ? req.method : 'other';
    const route = routeOf(req.path);
    const span = tracing.enabled
      ? tracing.tracer.startSpan(`${method} ${route}`, { kind: SpanKind.SERVER, attributes: { 'http.request.method': method, 'http.route': route } })
      : null;
    res.once('close', () => {
      const status = String(res.statusCode);
      const labels = { method, route, status };
      metrics.httpRequests.inc(labels);
      metrics.httpDuration.observe(labels, (performance.now() - startedAt) / 1000);
      if (span) {
        span.setAttribute('http.response.status_code', res.statusCode);
        if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
        span.end();
      }
    });
    if (span) context.with(trace.setSpan(context.active(), span), next);
    else next();
  };
}

/** GraphQL over HTTP: each operation counted and timed by name, type and outcome; the request's span takes its name. */
export function operationMetricsPlugin(metrics: GatewayMetrics, names: OperationNames): ApolloServerPlugin {
  return {
    async requestDidStart() {
      const startedAt = performance.now();
      return {
        async willSendResponse({ response, operation, request, document }) {
          // The errors as the client sees them: coded by formatError.
          const body = response.body.kind === 'single' ? response.body.singleResult : null;
          const first = body?.errors?.[0];
          const code = first?.extensions?.code;
          const outcome = first ? (typeof code === 'string' ? code : 'INTERNAL_SERVER_ERROR') : 'ok';
          // A document that failed validation has no resolved operation; its text still names one.
          const named = operation ?? (document ? getOperationAST(document, request.operationName) : null);
          const type = named?.operation ?? 'unknown';
          const given = named?.name?.value ?? request.operationName;
          const name = names.label(given);
          const labels = { operation: name, type, transport: 'http', outcome };
          metrics.operations.inc(labels);
          metrics.operationDuration.observe(labels, (performance.now() - startedAt) / 1000);
          const span = trace.getActiveSpan();
          if (span) {
            // Span names stay few (the label); the attribute keeps the name the client gave.
            span.updateName(`graphql.${type} ${name}`);
            span.setAttributes({ 'graphql.operation.name': given ?? name, 'graphql.operation.type': type, 'graphql.outcome': outcome });
            if (first) span.setStatus({ code: SpanStatusCode.ERROR, message: outcome });
          }
        },
      };
    },
  };
}

/** GraphQL over WebSocket and SSE: the same counters, and a span per operation when tracing is on. */
export function liveOperationObserver(metrics: GatewayMetrics, names: OperationNames, tracing: Tracing): OperationObserver {
  return (record) => {
    const type = record.kind ?? 'unknown';
    const name = names.label(record.operationName);
    const labels = { operation: name, type, transport: record.transport, outcome: record.outcome };
    metrics.operations.inc(labels);
    metrics.operationDuration.observe(labels, (record.endedAt - record.startedAt) / 1000);
    if (!tracing.enabled) return;
    const origin = performance.timeOrigin;
    const span = tracing.tracer.startSpan(`graphql.${type} ${name}`, {
      kind: SpanKind.SERVER,
      startTime: origin + record.startedAt,
      attributes: { 'graphql.operation.name': record.operationName ?? name, 'graphql.operation.type': type, 'graphql.outcome': record.outcome, 'graphql.transport': record.transport },
    });
    if (record.outcome !== 'ok') span.setStatus({ code: SpanStatusCode.ERROR, message: record.outcome });
    span.end(origin + record.endedAt);
  };
}
