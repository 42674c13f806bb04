import type { Caller } from '../../src/domain/caller';
import type { TurnRecord } from '../../src/domain/turn';
import type { TurnStore } from '../../src/sessions/session-store.port';

type TurnWriter = Pick<TurnStore, 'addTurn' | 'completeTurn' | 'failTurn'>;

/** Drives a turn through the turn lifecycle, as the orchestrator will: add (PENDING), then complete or fail. */
export const addTurn = (sessions: TurnWriter, caller: Caller, sessionId: string, instruction = 'do it'): Promise<TurnRecord> =>
  sessions.addTurn(caller, sessionId, { instructionSummary: instruction });

export const completeTurn = (sessions: TurnWriter, caller: Caller, sessionId: string, turnId: string, answer = 'done'): Promise<TurnRecord> =>
  sessions.completeTurn(caller, sessionId, turnId, {
    agentAnswerSummary: answer,
    fullAgentAnswerUrl: null,
    openAIResponseId: `resp-${turnId}`,
    openAIResponseReceivedDate: new Date(),
  });

export const failTurn = (sessions: TurnWriter, caller: Caller, sessionId: string, turnId: string): Promise<TurnRecord> =>
  sessions.failTurn(caller, sessionId, turnId, { errors: ['the provider failed'] });
