import type { Caller } from '../../domain/caller';
import { notFound } from '../../domain/errors';
import { parseEventId } from '../../domain/event-id';
import type { SessionFilter } from '../../domain/session';
import { filterNeedsParticipants, filterPin, matchesSessionFilter } from '../../domain/session-filter';
import { isTerminal } from '../../domain/turn-status';
import type { StatusRoute } from '../../events/live-feeds';
import type { EventScope, TurnEventHistory } from '../../events/turn-event.repository';
import type { TurnStatusEvent } from '../../events/turn-events';
import type { TurnOutputDelta, TurnRef } from '../../events/turn-output.port';
import type { GraphQLContext } from '../context';
import type { Loaders } from '../loaders';
import type { Services } from '../services';
import type { SharedFacts } from './event-facts';
import { LiveSource, noEvents, type Admission, type LiveSink, type ViewerDecision } from './live-source';

const REPLAY_PAGE = 200;

/** turnStatusChanged: checks that the session is readable and that a resume point is still stored. */
export async function turnStatusSource(
  { caller, services }: GraphQLContext,
  sessionId: string,
  afterEventId: string | null,
): Promise<LiveSource<TurnStatusEvent>> {
  const after = afterEventId === null ? null : parseEventId(afterEventId);
  const session = await services.sessions.getSession(caller, sessionId);
  if (!session) throw notFound('session');
  if (after !== null) await services.live.history.assertResumable(caller.orgId, after);
  const gone = { stop: notFound('session') };
  return new StatusEventSource(caller, services, { orgId: caller.orgId, sessionId: session.id }, after, {
    admit: async (event, loaders) => ((await loaders.session.load(event.sessionId)) ? 'deliver' : gone),
    admitViewers: async (event, shared) => {
      const mayRead = await (await shared.facts(event, services.sessionBatches)).readers();
      return (viewer) => (mayRead(viewer) ? 'deliver' : gone);
    },
  });
}

/** sessionActivity: the org's events, each delivered only if the caller may read its session and it matches the filter. */
export async function sessionActivitySource(
  { caller, services }: GraphQLContext,
  filter: SessionFilter,
  afterEventId: string | null,
): Promise<LiveSource<TurnStatusEvent>> {
  const after = afterEventId === null ? null : parseEventId(afterEventId);
  services.sessions.assertFilter(caller, filter);
  if (after !== null) await services.live.history.assertResumable(caller.orgId, after);
  const needsParticipants = filterNeedsParticipants(filter);
  const pin = filterPin(filter);
  const route: StatusRoute = pin === null ? { kind: 'org' } : { kind: 'pin', pin };
  return new StatusEventSource(caller, services, { orgId: caller.orgId, route }, after, {
    admit: async (event, loaders) => {
      const session = await loaders.session.load(event.sessionId);
      if (!session) return 'skip';
      const participants = needsParticipants ? await loaders.participants.load(session.id) : null;
      return matchesSessionFilter(session, participants, filter) ? 'deliver' : 'skip';
    },
    admitViewers: async (event, shared) => {
      const facts = await shared.facts(event, services.sessionBatches);
      if (!facts.session) return 'skip';
      const participants = needsParticipants ? await facts.participants() : null;
      if (!matchesSessionFilter(facts.session, participants, filter)) return 'skip';
      const mayRead = await facts.readers();
      return (viewer) => (mayRead(viewer) ? 'deliver' : 'skip');
    },
  });
}

/** turnOutput: the turn must be readable; a finished turn still yields the text kept for it. */
export async function turnOutputSource(
  { caller, services }: GraphQLContext,
  sessionId: string,
  turnId: string,
): Promise<LiveSource<TurnOutputDelta>> {
  const turn = await services.sessions.getTurn(caller, sessionId, turnId);
  if (!turn) throw notFound('turn');
  return new TurnOutputSource(caller, services, { orgId: turn.orgId, sessionId: turn.sessionId, turnId: turn.id });
}

/** A status stream's rule, for one viewer (`admit`) and for any viewers at once (`admitViewers`). */
interface StatusRule {
  readonly admit: (event: TurnStatusEvent, loaders: Loaders) => Promise<Admission>;
  readonly admitViewers: (event: TurnStatusEvent, shared: SharedFacts) => Promise<ViewerDecision>;
}

/** Where the stream's events come from: one session's, or the org's (narrowed by what a filter pins). */
type StatusScope = EventScope & { readonly route?: StatusRoute };

/** Status events of one org or one session, resumable from a stored event id. */
class StatusEventSource extends LiveSource<TurnStatusEvent> {
  readonly startPosition: number;

  constructor(
    caller: Caller,
    services: Services,
    private readonly scope: StatusScope,
    private readonly afterEventId: number | null,
    private readonly rule: StatusRule,
  ) {
    super(caller, services);
    this.startPosition = afterEventId ?? 0;
  }

  async open(sink: LiveSink<TurnStatusEvent>): Promise<() => void> {
    const { orgId, sessionId, route } = this.scope;
    const routed: StatusRoute = sessionId === undefined ? (route ?? { kind: 'org' }) : { kind: 'session', sessionId };
    return this.services.live.statuses.subscribe(orgId, (event) => {
      if (sessionId === undefined || event.sessionId === sessionId) sink.next(event);
    }, routed);
  }

  catchUp(): AsyncIterable<TurnStatusEvent> {
    return this.afterEventId === null ? noEvents() : replay(this.services.live.history, this.scope, this.afterEventId);
  }

  position(event: TurnStatusEvent): number {
    return event.eventId;
  }

  admit(event: TurnStatusEvent, loaders: Loaders): Promise<Admission> {
    return this.rule.admit(event, loaders);
  }

  override admitViewers(event: TurnStatusEvent, shared: SharedFacts): Promise<ViewerDecision> {
    return this.rule.admitViewers(event, shared);
  }
}

/** Stored events after `afterId`, page by page; refuses if pruning overtook the replay meanwhile. */
async function* replay(history: TurnEventHistory, scope: EventScope, afterId: number): AsyncIterable<TurnStatusEvent> {
  for (let after = afterId; ; ) {
    const page = await history.after(scope, after, REPLAY_PAGE);
    yield* page;
    if (page.length < REPLAY_PAGE) break;
    after = (page.at(-1) as TurnStatusEvent).eventId;
  }
  await history.assertResumable(scope.orgId, afterId);
}

/**
 * Text deltas of one turn; the stream ends when the turn leaves PENDING. Catch-up is the
 * text kept so far (from index 0); positions are delta indexes, so text a subscriber got
 * from its catch-up is not sent again live.
 */
class TurnOutputSource extends LiveSource<TurnOutputDelta> {
  readonly startPosition = -1;

  constructor(
    caller: Caller,
    services: Services,
    private readonly turn: TurnRef,
  ) {
    super(caller, services);
  }

  async open(sink: LiveSink<TurnOutputDelta>): Promise<() => void> {
    const { statuses, output } = this.services.live;
    let ended = false;
    let lastIndex = -1;
    const end = () => {
      if (ended) return;
      ended = true;
      sink.end();
    };
    // Text read back after a reconnect may repeat what already went out.
    const forward = (delta: TurnOutputDelta) => {
      if (ended || delta.index <= lastIndex) return;
      lastIndex = delta.index;
      sink.next(delta);
    };
    const stopStatus = statuses.subscribe(
      this.turn.orgId,
      (event) => {
        if (event.turnId === this.turn.turnId && isTerminal(event.status)) end();
      },
      { kind: 'session', sessionId: this.turn.sessionId },
    );
    let stopOutput: () => void;
    try {
      stopOutput = await output.onTurnOutput(this.turn, forward);
    } catch (e) {
      stopStatus();
      throw e;
    }
    // After a reconnect, text published meanwhile is read back from the kept copy.
    const stopResync = output.onResync(() => {
      output.outputSoFar(this.turn, lastIndex + 1).then(
        (deltas) => deltas.forEach(forward),
        () => undefined,
      );
    });
    const stop = () => {
      stopStatus();
      stopOutput();
      stopResync();
    };
    // Subscribed first, checked second: a turn that finished in between is not waited on forever.
    try {
      const current = await this.services.sessions.getTurn(this.caller, this.turn.sessionId, this.turn.turnId);
      if (!current || isTerminal(current.status)) end();
    } catch (e) {
      stop();
      throw e;
    }
    return stop;
  }

  async *catchUp(): AsyncIterable<TurnOutputDelta> {
    yield* await this.services.live.output.outputSoFar(this.turn, 0);
  }

  position(delta: TurnOutputDelta): number {
    return delta.index;
  }

  async admit(delta: TurnOutputDelta, loaders: Loaders): Promise<Admission> {
    return (await loaders.session.load(delta.sessionId)) ? 'deliver' : { stop: notFound('turn') };
  }

  override async admitViewers(delta: TurnOutputDelta, shared: SharedFacts): Promise<ViewerDecision> {
    const mayRead = await (await shared.facts(delta, this.services.sessionBatches)).readers();
    return (viewer) => (mayRead(viewer) ? 'deliver' : { stop: notFound('turn') });
  }
}
