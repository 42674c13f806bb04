import { TOOL_CALL_STATUSES, type ToolCallEvent, type ToolCallStatus } from '../domain/tool-call-record';
import { isTurnStatus, type TurnStatus } from '../domain/turn-status';
import type { TurnStatusEvent } from './turn-events';
import type { TurnOutputDelta } from './turn-output.port';

/**
 * JSON wire formats of the Redis bus. Messages come from other processes, so they are
 * checked field by field when read; anything malformed is dropped by the caller (null).
 */
export function encodeStatusEvent(event: TurnStatusEvent): string {
  return JSON.stringify({ ...event, statusTimeStamp: event.statusTimeStamp.toISOString() });
}

export function decodeStatusEvent(text: string): TurnStatusEvent | null {
  const v = parseObject(text);
  if (!v) return null;
  const header = v.createdByUser as Record<string, unknown> | null;
  const date = typeof v.statusTimeStamp === 'string' ? new Date(v.statusTimeStamp) : null;
  const previous = v.previousStatus === null ? null : status(v.previousStatus);
  if (
    !isPositiveInt(v.eventId) ||
    !isText(v.orgId) ||
    !isText(v.sessionId) ||
    !isText(v.turnId) ||
    !isPositiveInt(v.sequenceNumber) ||
    previous === undefined ||
    !status(v.status) ||
    !date ||
    Number.isNaN(date.getTime()) ||
    typeof header !== 'object' ||
    header === null ||
    !isText(header.id) ||
    typeof header.text !== 'string'
  ) {
    return null;
  }
  return {
    eventId: v.eventId,
    orgId: v.orgId,
    sessionId: v.sessionId,
    turnId: v.turnId,
    sequenceNumber: v.sequenceNumber,
    previousStatus: previous,
    status: v.status as TurnStatus,
    statusTimeStamp: date,
    createdByUser: { id: header.id, text: header.text },
  };
}

export function encodeOutputDelta(delta: TurnOutputDelta): string {
  return JSON.stringify({
    orgId: delta.orgId,
    sessionId: delta.sessionId,
    turnId: delta.turnId,
    index: delta.index,
    textDelta: delta.textDelta,
    ...(delta.toolCall ? { toolCall: delta.toolCall } : {}),
  });
}

export function decodeOutputDelta(text: string): TurnOutputDelta | null {
  const v = parseObject(text);
  if (!v) return null;
  if (!isText(v.orgId) || !isText(v.sessionId) || !isText(v.turnId) || !isIndex(v.index) || typeof v.textDelta !== 'string') {
    return null;
  }
  const base = { orgId: v.orgId, sessionId: v.sessionId, turnId: v.turnId, index: v.index, textDelta: v.textDelta };
  if (v.toolCall === undefined) return base;
  const toolCall = decodeToolCall(v.toolCall);
  return toolCall ? { ...base, toolCall } : null;
}

function decodeToolCall(value: unknown): ToolCallEvent | null {
  if (typeof value !== 'object' || value === null) return null;
  const c = value as Record<string, unknown>;
  if (
    !isText(c.id) ||
    typeof c.name !== 'string' ||
    (c.origin !== 'SERVER' && c.origin !== 'CLIENT') ||
    typeof c.argumentsJson !== 'string' ||
    (c.resultSummary !== null && typeof c.resultSummary !== 'string') ||
    (c.executionMs !== null && !isIndex(c.executionMs)) ||
    typeof c.status !== 'string' ||
    !TOOL_CALL_STATUSES.includes(c.status as ToolCallStatus)
  ) {
    return null;
  }
  return {
    id: c.id,
    name: c.name,
    origin: c.origin,
    argumentsJson: c.argumentsJson,
    resultSummary: c.resultSummary,
    executionMs: c.executionMs,
    status: c.status as ToolCallStatus,
  };
}

function parseObject(text: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

const isText = (v: unknown): v is string => typeof v === 'string' && v.length > 0 && v.length <= 200;
const isPositiveInt = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) > 0;
const isIndex = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;
const status = (v: unknown): TurnStatus | undefined => (typeof v === 'string' && isTurnStatus(v) ? v : undefined);
