import { userHeader } from '../../src/domain/caller';
import type { TurnRecord } from '../../src/domain/turn';
import { checkNewTurn, openTurn } from '../../src/domain/turn-transitions';
import { WrittenTurns } from '../../src/sessions/written-turns';

const turn = (id: string, orgId = 'acme', sessionId = 's-1'): TurnRecord =>
  openTurn(checkNewTurn({ instructionSummary: id }), {
    id,
    session: { id: sessionId, orgId, turnCount: 0 },
    author: userHeader({ userId: 'u', userName: 'U', orgId, orgName: orgId, roles: [] }),
    now: new Date('2030-01-01T10:00:00Z'),
  });

describe('WrittenTurns: what this instance last wrote of its PENDING turns', () => {
  it('hands a turn out once, with the revision its last write left', () => {
    const written = new WrittenTurns();
    written.remember(turn('t-1'), 0);
    written.remember(turn('t-1'), 2);
    expect(written.take('acme', 's-1', 't-1')).toMatchObject({ turn: { id: 't-1' }, revision: 2 });
    expect(written.take('acme', 's-1', 't-1')).toBeNull();
  });

  it('answers only for the same org and session, and forgets a turn that left PENDING or was forgotten', () => {
    const written = new WrittenTurns();
    written.remember(turn('t-1', 'acme', 's-1'), 0);
    expect(written.take('other-org', 's-1', 't-1')).toBeNull();
    expect(written.take('acme', 's-2', 't-1')).toBeNull();
    written.remember(turn('t-2'), 0);
    written.remember({ ...turn('t-2'), status: 'COMPLETED' }, 1);
    expect(written.take('acme', 's-1', 't-2')).toBeNull();
    written.remember(turn('t-3'), 0);
    written.forget('acme', 't-3');
    expect(written.take('acme', 's-1', 't-3')).toBeNull();
  });

  it('keeps at most its capacity, dropping the turn written longest ago', () => {
    const written = new WrittenTurns(2);
    for (const id of ['t-1', 't-2', 't-3']) written.remember(turn(id), 0);
    expect(written.take('acme', 's-1', 't-1')).toBeNull();
    expect(written.take('acme', 's-1', 't-2')).not.toBeNull();
    expect(written.take('acme', 's-1', 't-3')).not.toBeNull();
  });
});
