import { SpanKind } from '@opentelemetry/api';
import { isTerminal } from '../domain/turn-status';
import type { TurnEventSink, TurnStatusEvent } from '../events/turn-events';
import { LlmError, type LanguageModel, type LlmCallOptions, type LlmRequest, type LlmResponse } from '../llm/llm.port';
import type { StatementObserver } from '../persistence/database';
import type { RetrievalRequest, RetrievedChunk, Retriever } from '../retrieval/retrieval.port';
import type { GatewayMetrics } from './metrics';
import { inSpan, type Tracing } from './tracing';

export interface Instruments {
  readonly metrics: GatewayMetrics;
  readonly tracing: Tracing;
}

const seconds = (startedAt: number) => (performance.now() - startedAt) / 1000;

/** The language model port, timed, counted (tokens) and traced; the orchestrator cannot tell. */
export class InstrumentedLanguageModel implements LanguageModel {
  constructor(
    private readonly inner: LanguageModel,
    private readonly instruments: Instruments,
  ) {}

  modelFor(requested: string): string {
    return this.inner.modelFor(requested);
  }

  payloadOf(request: LlmRequest): Record<string, unknown> {
    return this.inner.payloadOf(request);
  }

  respond(request: LlmRequest, options: LlmCallOptions): Promise<LlmResponse> {
    const { metrics, tracing } = this.instruments;
    const model = this.inner.modelFor(request.model);
    return inSpan(tracing, 'llm.respond', { 'gen_ai.request.model': model, 'gen_ai.operation.name': 'responses' }, async (span) => {
      const startedAt = performance.now();
      try {
        const response = await this.inner.respond(request, options);
        metrics.llmDuration.observe({ outcome: 'ok' }, seconds(startedAt));
        if (response.usage) {
          metrics.llmTokens.inc({ kind: 'input' }, response.usage.inputTokens);
          metrics.llmTokens.inc({ kind: 'output' }, response.usage.outputTokens);
          span?.setAttributes({ 'gen_ai.usage.input_tokens': response.usage.inputTokens, 'gen_ai.usage.output_tokens': response.usage.outputTokens });
        }
        return response;
      } catch (e) {
        metrics.llmDuration.observe({ outcome: e instanceof LlmError ? e.kind : 'failed' }, seconds(startedAt));
        throw e;
      }
    }, SpanKind.CLIENT);
  }
}

/** The retrieval port, timed and traced. */
export class InstrumentedRetriever implements Retriever {
  constructor(
    private readonly inner: Retriever,
    private readonly instruments: Instruments,
  ) {}

  retrieve(request: RetrievalRequest): Promise<RetrievedChunk[]> {
    const { metrics, tracing } = this.instruments;
    return inSpan(tracing, 'retrieval.retrieve', { 'retrieval.collection': request.collection, 'retrieval.limit': request.limit }, async (span) => {
      const startedAt = performance.now();
      try {
        const chunks = await this.inner.retrieve(request);
        metrics.retrievalDuration.observe({ outcome: 'ok' }, seconds(startedAt));
        span?.setAttribute('retrieval.chunks', chunks.length);
        return chunks;
      } catch (e) {
        metrics.retrievalDuration.observe({ outcome: 'failed' }, seconds(startedAt));
        throw e;
      }
    });
  }
}

/** Every SQL statement timed, and traced as a child of whatever span runs it. */
export function statementObserver({ metrics, tracing }: Instruments, system: string): StatementObserver {
  // Bound once: an execute runs ~18 statements, and each labelled observe would look its series up again.
  const ok = metrics.sqlDuration.labels({ outcome: 'ok' });
  const failed = metrics.sqlDuration.labels({ outcome: 'failed' });
  const timed = async <T>(run: () => Promise<T>): Promise<T> => {
    const startedAt = performance.now();
    try {
      const result = await run();
      ok.observe(seconds(startedAt));
      return result;
    } catch (e) {
      failed.observe(seconds(startedAt));
      throw e;
    }
  };
  if (!tracing.enabled) return (_sql, run) => timed(run);
  return (sql, run) =>
    inSpan(tracing, 'sql', { 'db.system': system, 'db.statement': sql.length > 2_000 ? `${sql.slice(0, 2_000)}…` : sql }, () => timed(run), SpanKind.CLIENT);
}

/** Counts turns reaching a final status where the change is committed (this instance), then passes the event on. */
export class CountingTurnEventSink implements TurnEventSink {
  constructor(
    private readonly inner: TurnEventSink,
    private readonly metrics: GatewayMetrics,
  ) {}

  turnStatusChanged(event: TurnStatusEvent): void {
    if (isTerminal(event.status)) this.metrics.turns.inc({ status: event.status });
    this.inner.turnStatusChanged(event);
  }
}

/** How long a committed status change took to come back from the bus. */
export const busLagListener = (metrics: GatewayMetrics) => (event: TurnStatusEvent) =>
  metrics.busLag.observe(Math.max(0, Date.now() - event.statusTimeStamp.getTime()) / 1000);
