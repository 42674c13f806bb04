import { ForkSessionDocument, GatewayError, type SessionDetailQuery, type TurnRowFragment } from '../../packages/client/src';
import type { App } from './app';
import { formatNumber, formatUsd, h } from './dom';
import { hrefOf } from './routes';

type Session = NonNullable<SessionDetailQuery['agentSession']>;

/** Where a session was forked from and its forks, as links; null when it has neither. */
export function lineageOf(session: Session): HTMLElement | null {
  const { forkedFrom, forks, inheritedUsage } = session;
  if (!forkedFrom && forks.totalCount === 0) return null;
  const source = forkedFrom?.session;
  return h(
    'div',
    { class: 'lineage', 'data-testid': 'fork-lineage' },
    forkedFrom
      ? h(
          'p',
          { 'data-testid': 'forked-from' },
          'Forked from ',
          source ? h('a', { href: hrefOf({ page: 'session', sessionId: source.id }) }, source.name) : 'a session you can no longer read',
          forkedFrom.turn ? ` at turn #${forkedFrom.turn.sequenceNumber}` : '',
          inheritedUsage ? h('span', { class: 'muted' }, ` · inherited ${formatNumber(inheritedUsage.totalTokens)} tokens · ${formatUsd(inheritedUsage.estimatedCostUsd)}, not counted again`) : null,
        )
      : null,
    forks.totalCount > 0
      ? h(
          'p',
          { 'data-testid': 'forks' },
          `Forks (${formatNumber(forks.totalCount)}): `,
          ...forks.edges.flatMap(({ node }, i) => [
            i > 0 ? ', ' : '',
            h('a', { href: hrefOf({ page: 'session', sessionId: node.id }), 'data-fork-id': node.id }, node.name),
            h('span', { class: 'muted' }, ` (${node.ownerUser.text})`),
          ]),
        )
      : null,
  );
}

/** "Fork here" on a finished turn: a new session of the caller's up to this turn, opened at once. */
export function forkButton(app: App, sessionId: string, turn: TurnRowFragment, message: HTMLElement): HTMLElement | null {
  if (turn.status === 'PENDING') return null;
  return h(
    'button',
    {
      type: 'button',
      class: 'quiet',
      'aria-label': `Fork here at turn ${turn.sequenceNumber}`,
      onclick: async (event: Event) => {
        const button = event.currentTarget as HTMLButtonElement;
        button.disabled = true;
        try {
          const { forkAgentSession } = await app.client.mutate(ForkSessionDocument, { sessionId, turnId: turn.id });
          location.hash = hrefOf({ page: 'session', sessionId: forkAgentSession.id });
        } catch (e) {
          button.disabled = false;
          if (e instanceof GatewayError) app.onError(e);
          message.textContent = `Could not fork: ${(e as Error).message}`;
        }
      },
    },
    'Fork here',
  );
}
