import {
  GatewayError,
  LatestEventIdDocument,
  SessionActivityDocument,
  SessionListDocument,
  type AgentSessionFilter,
  type AgentSessionTurnStatus,
  type SessionRowFragment,
} from '../../packages/client/src';
import type { App, Page } from './app';
import { clear, formatNumber, h, statusBadge, timeAgo } from './dom';
import { hrefOf } from './routes';
import { applyActivity, totalText, type SessionTable } from './session-rows';

const PAGE_SIZE = 25;
const STATUSES: readonly AgentSessionTurnStatus[] = ['PENDING', 'COMPLETED', 'FAILED', 'CANCELLED'];
const COLUMNS = ['Name', 'Owner', 'Agent context', 'Conversation', 'Last turn', 'Last turn date', 'Turns', 'Participants'];

interface Filters {
  readonly participant: string;
  readonly status: AgentSessionTurnStatus | null;
  readonly includeDeleted: boolean;
}

/**
 * The caller's visible sessions, newest activity first, with filters, cursor paging and the
 * total. Rows follow sessionActivity live: a shown session updates in place, a new one
 * appears at the top of the first page. The feed starts at the event id read before the list,
 * so nothing that changes while the list loads is missed, and the client resumes it after a
 * dropped connection.
 */
export function mountSessionsPage(app: App, main: HTMLElement): Page {
  let filters: Filters = { participant: '', status: null, includeDeleted: false };
  /** `after` of every page visited so far; the last one is the page shown. */
  let pages: (string | null)[] = [null];
  let table: SessionTable = { rows: [], totalCount: 0, totalCountIsLowerBound: false };
  let nextCursor: string | null = null;
  let stopLive: (() => void) | null = null;
  let generation = 0;
  const rowElements = new Map<string, HTMLTableRowElement>();

  const total = h('span', { 'data-testid': 'total-count' }, '…');
  const notice = h('p', { class: 'notice', role: 'status' });
  const tbody = h('tbody');
  const tableElement = h(
    'table',
    { class: 'sessions', 'aria-busy': 'true' },
    h('caption', { class: 'visually-hidden' }, 'Sessions, newest activity first'),
    h('thead', {}, h('tr', {}, ...COLUMNS.map((c) => h('th', { scope: 'col' }, c)))),
    tbody,
  );
  const previous = h('button', { type: 'button', class: 'quiet', onclick: () => go(-1) }, '← Newer');
  const next = h('button', { type: 'button', class: 'quiet', onclick: () => go(1) }, 'Older →');
  const pageLabel = h('span', { class: 'muted' });

  const participant = h('input', {
    type: 'search',
    name: 'participant',
    id: 'participant-filter',
    placeholder: 'user id, e.g. user-2',
    autocomplete: 'off',
    'data-testid': 'participant-filter',
  });
  const status = h(
    'select',
    { name: 'status', id: 'status-filter', onchange: () => apply() },
    h('option', { value: '' }, 'Any status'),
    ...STATUSES.map((s) => h('option', { value: s }, s.charAt(0) + s.slice(1).toLowerCase())),
  );
  const deleted = h('input', { type: 'checkbox', name: 'deleted', id: 'deleted-filter', onchange: () => apply() });
  const form = h(
    'form',
    {
      class: 'filters',
      role: 'search',
      'aria-label': 'Filter sessions',
      onsubmit: (event: Event) => {
        event.preventDefault();
        apply();
      },
    },
    h('div', { class: 'field' }, h('label', { for: 'participant-filter' }, 'Participant'), participant),
    h('div', { class: 'field' }, h('label', { for: 'status-filter' }, 'Last turn status'), status),
    app.isAdmin ? h('div', { class: 'field check' }, deleted, h('label', { for: 'deleted-filter' }, 'Include deleted')) : null,
    h('button', { type: 'submit' }, 'Apply'),
  );

  clear(
    main,
    h('div', { class: 'page-head' }, h('h1', {}, 'Sessions'), h('p', { class: 'count' }, total, ' sessions')),
    form,
    notice,
    h('div', { class: 'table-wrap' }, tableElement),
    h('nav', { class: 'pager', 'aria-label': 'Pages of sessions' }, previous, pageLabel, next),
  );

  function apply(): void {
    filters = { participant: participant.value.trim(), status: (status.value || null) as AgentSessionTurnStatus | null, includeDeleted: deleted.checked };
    pages = [null];
    void load(true);
  }

  function go(step: 1 | -1): void {
    if (step === 1 && nextCursor) pages = [...pages, nextCursor];
    else if (step === -1 && pages.length > 1) pages = pages.slice(0, -1);
    else return;
    void load(false);
  }

  /** The list's filter; the live feed leaves the status out, so a row that changes status still updates. */
  const listFilter = (): AgentSessionFilter => ({ ...liveFilter(), ...(filters.status ? { lastTurnStatus: filters.status } : {}) });
  const liveFilter = (): AgentSessionFilter => ({
    ...(filters.participant ? { participantId: filters.participant } : {}),
    ...(filters.includeDeleted ? { includeDeleted: true } : {}),
  });

  async function load(resubscribe: boolean): Promise<void> {
    const mine = ++generation;
    tableElement.setAttribute('aria-busy', 'true');
    try {
      let from: string | null = null;
      if (resubscribe) {
        stopLive?.();
        stopLive = null;
        from = (await app.client.query(LatestEventIdDocument)).latestEventId;
      }
      const { agentSessions } = await app.client.query(SessionListDocument, { filter: listFilter(), first: PAGE_SIZE, after: pages.at(-1) ?? null });
      if (mine !== generation) return;
      table = {
        rows: agentSessions.edges.map((e) => e.node),
        totalCount: agentSessions.totalCount,
        totalCountIsLowerBound: agentSessions.totalCountIsLowerBound,
      };
      nextCursor = agentSessions.pageInfo.hasNextPage ? agentSessions.pageInfo.endCursor ?? null : null;
      notice.textContent = '';
      renderTable();
      if (from !== null) follow(from);
    } catch (e) {
      if (mine !== generation) return;
      fail(e);
    }
  }

  function follow(afterEventId: string): void {
    stopLive = app.client.subscribe(SessionActivityDocument, { filter: liveFilter(), afterEventId }, {
      next: ({ sessionActivity }) => {
        const { table: updated, applied } = applyActivity(table, sessionActivity, { firstPage: pages.length === 1, status: filters.status });
        table = updated;
        if (applied === 'ignored') return;
        const row = rowOf(sessionActivity.session);
        const shown = rowElements.get(sessionActivity.session.id);
        if (shown) shown.replaceWith(row);
        else {
          tbody.querySelector('.empty')?.remove();
          tbody.prepend(row);
        }
        rowElements.set(sessionActivity.session.id, row);
        row.classList.add('flash');
        total.textContent = totalText(table, formatNumber);
      },
      error: (error) => {
        app.onError(error);
        notice.replaceChildren(
          `Live updates stopped: ${error.message}. `,
          h('button', { type: 'button', class: 'quiet', onclick: () => void load(true) }, 'Reload'),
        );
      },
    });
  }

  function renderTable(): void {
    tableElement.setAttribute('aria-busy', 'false');
    total.textContent = totalText(table, formatNumber);
    rowElements.clear();
    const rows = table.rows.map((session) => {
      const row = rowOf(session);
      rowElements.set(session.id, row);
      return row;
    });
    clear(tbody, ...(rows.length ? rows : [h('tr', { class: 'empty' }, h('td', { colspan: COLUMNS.length }, 'No sessions match these filters.'))]));
    previous.disabled = pages.length === 1;
    next.disabled = nextCursor === null;
    pageLabel.textContent = `Page ${pages.length}`;
  }

  function fail(e: unknown): void {
    tableElement.setAttribute('aria-busy', 'false');
    if (e instanceof GatewayError) app.onError(e);
    notice.textContent = e instanceof GatewayError && e.code === 'FORBIDDEN' ? e.message : `Could not load sessions: ${(e as Error).message}`;
  }

  void load(true);
  return {
    live: true,
    dispose() {
      generation++;
      stopLive?.();
    },
  };
}

function rowOf(session: SessionRowFragment): HTMLTableRowElement {
  const cell = (label: string, ...content: (Node | string)[]) => h('td', { 'data-label': label }, ...content);
  const participants = session.participants.map((p) => p.text).join(', ');
  return h(
    'tr',
    { 'data-testid': 'session-row', 'data-session-id': session.id },
    h('th', { scope: 'row', 'data-label': 'Name' }, h('a', { href: hrefOf({ page: 'session', sessionId: session.id }) }, session.name)),
    cell('Owner', session.ownerUser.text),
    cell('Agent context', session.agentContextName ?? '—'),
    cell('Conversation', session.conversationContextName ?? '—'),
    cell('Last turn', statusBadge(session.lastTurnStatus, 'session-status')),
    cell('Last turn date', timeAgo(session.lastTurnDate)),
    h('td', { 'data-label': 'Turns', class: 'num' }, formatNumber(session.turnCount)),
    h('td', { 'data-label': 'Participants' }, h('span', { 'data-testid': 'session-participants', title: session.participants.map((p) => p.id).join(', ') }, participants)),
  );
}
