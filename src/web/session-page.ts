import {
  CancelTurnDocument,
  ExecuteAsyncDocument,
  GatewayError,
  LatestEventIdDocument,
  SessionDetailDocument,
  TurnOutputDocument,
  TurnStatusChangedDocument,
  type SessionDetailQuery,
  type TurnRowFragment,
} from '../../packages/client/src';
import type { App, Page } from './app';
import { clear, formatNumber, formatUsd, h, statusBadge, timeAgo } from './dom';
import { forkButton, lineageOf } from './fork-lineage';
import { markdownBlock } from './markdown';
import { hrefOf } from './routes';

const TURNS_PAGE = 50;
type Session = NonNullable<SessionDetailQuery['agentSession']>;

/**
 * One session: its turns (updated live from turnStatusChanged), the running turn's text as it
 * streams (turnOutput), cancel for a PENDING turn, the full texts behind the summaries
 * (fetched with the token) and a field that sends a new instruction (executeAsync).
 */
export function mountSessionPage(app: App, main: HTMLElement, sessionId: string): Page {
  let disposed = false;
  let session: Session | null = null;
  const turns = new Map<string, { turn: TurnRowFragment; element: HTMLLIElement }>();
  let turnsCursor: string | null = null;
  let stopStatus: (() => void) | null = null;
  let output: { turnId: string; stop: () => void } | null = null;

  const notice = h('p', { class: 'notice', role: 'status' });
  const turnCount = h('span');
  let turnTotal = 0;
  const list = h('ol', { class: 'turns', 'aria-label': 'Turns' });
  const more = h('button', { type: 'button', class: 'quiet', hidden: true, onclick: () => void loadTurns() }, 'Load more turns');
  const outputTitle = h('h2', { id: 'output-title' }, 'Live output');
  // Raw text while it streams (half a code fence would render wrongly), Markdown once the turn has finished.
  const outputText = h('div', { class: 'output', 'data-testid': 'turn-output', 'aria-busy': 'false' });
  const outputPanel = h('section', { class: 'card output-panel', 'aria-labelledby': 'output-title', hidden: true }, outputTitle, outputText);
  const dialogTitle = h('h2', { id: 'full-text-title' });
  const dialogText = h('pre', { class: 'full-text' });
  const dialog = h(
    'dialog',
    { 'aria-labelledby': 'full-text-title' },
    h('div', { class: 'dialog-head' }, dialogTitle, h('form', { method: 'dialog' }, h('button', { type: 'submit', class: 'quiet' }, 'Close'))),
    dialogText,
  );

  clear(main, h('p', {}, h('a', { href: hrefOf({ page: 'sessions' }) }, '← Sessions')), h('p', { class: 'muted' }, 'Loading…'));

  async function load(): Promise<void> {
    try {
      const from = (await app.client.query(LatestEventIdDocument)).latestEventId;
      const { agentSession } = await app.client.query(SessionDetailDocument, { id: sessionId, turnsFirst: TURNS_PAGE });
      if (disposed) return;
      if (!agentSession) {
        clear(main, h('p', {}, h('a', { href: hrefOf({ page: 'sessions' }) }, '← Sessions')), h('h1', {}, 'Session not found'), h('p', {}, 'It does not exist, or you may not read it.'));
        return;
      }
      session = agentSession;
      turnTotal = agentSession.turns.totalCount;
      turnCount.textContent = `${formatNumber(turnTotal)} turns`;
      render(agentSession);
      addTurns(agentSession.turns);
      stopStatus = app.client.subscribe(TurnStatusChangedDocument, { sessionId, afterEventId: from }, {
        // The event's own previousStatus says whether the turn is new; its `turn` is the turn as it is now.
        next: ({ turnStatusChanged }) => showTurn(turnStatusChanged.turn, { isNew: turnStatusChanged.previousStatus === null }),
        error: (error) => {
          app.onError(error);
          notice.textContent = `Live updates stopped: ${error.message}. Reload the page to catch up.`;
        },
      });
      const last = [...turns.values()].at(-1)?.turn;
      if (last?.status === 'PENDING') follow(last);
    } catch (e) {
      failed(e, 'Could not load the session');
    }
  }

  async function loadTurns(): Promise<void> {
    more.disabled = true;
    try {
      const { agentSession } = await app.client.query(SessionDetailDocument, { id: sessionId, turnsFirst: TURNS_PAGE, turnsAfter: turnsCursor });
      if (agentSession && !disposed) addTurns(agentSession.turns);
    } catch (e) {
      failed(e, 'Could not load more turns');
    } finally {
      more.disabled = false;
    }
  }

  function addTurns(page: Session['turns']): void {
    for (const { node } of page.edges) showTurn(node, { fromPage: true });
    turnsCursor = page.pageInfo.hasNextPage ? page.pageInfo.endCursor ?? null : null;
    more.hidden = turnsCursor === null;
  }

  /**
   * A turn as it is now: its row replaced in place, or added at the end once every older turn
   * is shown. `isNew`: a status event says the turn was just added (an older turn not loaded
   * yet is not counted again).
   */
  function showTurn(turn: TurnRowFragment, { fromPage = false, isNew = false }: { fromPage?: boolean; isNew?: boolean } = {}): void {
    const known = turns.get(turn.id);
    if (!known && isNew) turnCount.textContent = `${formatNumber(++turnTotal)} turns`;
    const element = turnElement(turn);
    if (known) known.element.replaceWith(element);
    else if (fromPage || turnsCursor === null) list.append(element);
    else return;
    turns.set(turn.id, { turn, element });
    if (!fromPage) element.classList.add('flash');
    if (turn.status === 'PENDING' && !fromPage) follow(turn);
    if (output?.turnId === turn.id && turn.status !== 'PENDING') outputTitle.textContent = `Turn #${turn.sequenceNumber} · ${turn.status.toLowerCase()}`;
  }

  /** Streams the text of a running turn into the output panel (one turn at a time). */
  function follow(turn: TurnRowFragment): void {
    if (output?.turnId === turn.id) return;
    output?.stop();
    outputPanel.hidden = false;
    outputTitle.textContent = `Turn #${turn.sequenceNumber} · streaming…`;
    const streamed = h('pre', {});
    outputText.replaceChildren(streamed);
    outputText.setAttribute('aria-busy', 'true');
    const stop = app.client.subscribe(TurnOutputDocument, { sessionId, turnId: turn.id }, {
      next: ({ turnOutput }) => streamed.append(turnOutput.textDelta),
      complete: () => {
        outputText.replaceChildren(markdownBlock(streamed.textContent ?? ''));
        outputText.setAttribute('aria-busy', 'false');
        const now = turns.get(turn.id)?.turn;
        if (now && now.status !== 'PENDING') outputTitle.textContent = `Turn #${now.sequenceNumber} · ${now.status.toLowerCase()}`;
      },
      error: (error) => {
        app.onError(error);
        outputText.setAttribute('aria-busy', 'false');
      },
    });
    output = { turnId: turn.id, stop };
  }

  function turnElement(turn: TurnRowFragment): HTMLLIElement {
    const message = h('p', { class: 'error', role: 'alert' });
    const mayCancel =
      turn.status === 'PENDING' && (app.isAdmin || turn.createdByUser.id === app.viewer.user.id || session?.ownerUser.id === app.viewer.user.id);
    const cancel = mayCancel
      ? h('button', {
          type: 'button',
          class: 'danger',
          'aria-label': `Cancel turn ${turn.sequenceNumber}`,
          onclick: async (event: Event) => {
            const button = event.currentTarget as HTMLButtonElement;
            button.disabled = true;
            try {
              showTurn((await app.client.mutate(CancelTurnDocument, { sessionId, turnId: turn.id })).cancelTurn);
            } catch (e) {
              button.disabled = false;
              if (e instanceof GatewayError) app.onError(e);
              message.textContent = `Could not cancel: ${(e as Error).message}`;
            }
          },
        }, 'Cancel')
      : null;
    const usage = turn.usage
      ? `${formatNumber(turn.usage.totalTokens)} tokens${turn.usage.isEstimated ? ' (estimated)' : ''} · ${formatUsd(turn.usage.estimatedCostUsd)}${turn.inheritedFrom ? ' · inherited' : ''}`
      : null;
    const answer = turn.agentAnswerSummary ?? (turn.errors.length ? turn.errors.join(' ') : turn.status === 'PENDING' ? 'Working on it…' : '—');
    return h(
      'li',
      { class: 'turn card', 'data-testid': 'turn-row', 'data-turn-id': turn.id },
      h(
        'div',
        { class: 'turn-head' },
        h('span', { class: 'seq' }, `#${turn.sequenceNumber}`),
        statusBadge(turn.status, 'turn-status'),
        h('span', {}, turn.createdByUser.text),
        h('span', { class: 'muted' }, timeAgo(turn.statusTimeStamp)),
        usage ? h('span', { class: 'muted usage' }, usage) : null,
        cancel,
        forkButton(app, sessionId, turn, message),
      ),
      h('p', { class: 'label' }, 'Instruction'),
      markdownBlock(turn.instructionSummary, 'summary'),
      fullTextLink(turn.fullInstructionUrl, `Full instruction of turn #${turn.sequenceNumber}`, 'Full instruction'),
      h('p', { class: 'label' }, turn.errors.length && !turn.agentAnswerSummary ? 'Errors' : 'Answer'),
      turn.agentAnswerSummary ? markdownBlock(turn.agentAnswerSummary, 'summary') : h('p', { class: 'summary' }, answer),
      fullTextLink(turn.fullAgentAnswerUrl, `Full answer of turn #${turn.sequenceNumber}`, 'Full answer'),
      filesOf(turn),
      toolCallsOf(turn),
      message,
    );
  }

  /** Files the model wrote with write_file, opened like the full texts. */
  function filesOf(turn: TurnRowFragment): HTMLElement | null {
    if (turn.files.length === 0) return null;
    return h(
      'div',
      { 'data-testid': 'turn-files' },
      h('p', { class: 'label' }, 'Files written'),
      ...turn.files.map((f) => fullTextLink(f.url, f.name, `${f.name} (${formatNumber(f.sizeBytes)} bytes)`)),
    );
  }

  /** The turn's audit trail: every tool call, the gateway's and the client's. */
  function toolCallsOf(turn: TurnRowFragment): HTMLElement | null {
    if (turn.toolCalls.length === 0) return null;
    return h(
      'div',
      {},
      h('p', { class: 'label' }, 'Tool calls'),
      h(
        'ul',
        { class: 'tool-calls', 'data-testid': 'turn-tool-calls' },
        ...turn.toolCalls.map((c) =>
          h('li', { 'data-tool-call-id': c.id }, `${c.name} · ${c.origin.toLowerCase()} · ${c.status.toLowerCase()}${c.executionMs === null ? '' : ` · ${formatNumber(c.executionMs)} ms`}`),
        ),
      ),
    );
  }

  /** The blob URLs need the bearer token, so the text is fetched with it and shown in a dialog. */
  function fullTextLink(url: string | null, title: string, label: string): HTMLElement | null {
    if (!url) return null;
    return h(
      'p',
      {},
      h('a', {
        href: url,
        class: 'full-link',
        onclick: async (event: Event) => {
          event.preventDefault();
          dialogTitle.textContent = title;
          dialogText.textContent = 'Loading…';
          dialog.showModal();
          try {
            dialogText.textContent = await app.client.fetchText(url);
          } catch (e) {
            if (e instanceof GatewayError) app.onError(e);
            dialogText.textContent = `Could not load the text: ${(e as Error).message}`;
          }
        },
      }, label),
    );
  }

  function render(s: Session): void {
    const instruction = h('textarea', { id: 'instruction', name: 'instruction', rows: 3, required: true, disabled: s.isDeleted });
    const sent = h('p', { class: 'muted', role: 'status' });
    const send = h('button', { type: 'submit', disabled: s.isDeleted }, 'Send');
    const form = h(
      'form',
      {
        class: 'card send',
        onsubmit: async (event: Event) => {
          event.preventDefault();
          const text = instruction.value.trim();
          if (!text) return;
          send.disabled = true;
          sent.textContent = 'Sending…';
          try {
            const { executeAsync } = await app.client.mutate(ExecuteAsyncDocument, {
              input: { sessionId: s.id, agentContextId: s.agentContextId, conversationContextId: s.conversationContextId ?? null, instruction: text, clientKind: 'BROWSER' },
            });
            instruction.value = '';
            sent.textContent = `Sent as turn #${executeAsync.sequenceNumber}.`;
          } catch (e) {
            if (e instanceof GatewayError) app.onError(e);
            sent.textContent =
              e instanceof GatewayError && e.code === 'SESSION_BUSY'
                ? 'The session is still working on its last turn; send again once it has finished (or cancel it).'
                : `Not sent: ${(e as Error).message}`;
          } finally {
            send.disabled = s.isDeleted;
          }
        },
      },
      h('label', { for: 'instruction' }, s.isDeleted ? 'This session is deleted' : 'New instruction'),
      instruction,
      h('div', { class: 'send-row' }, send, sent),
    );
    clear(
      main,
      h('p', {}, h('a', { href: hrefOf({ page: 'sessions' }) }, '← Sessions')),
      h('div', { class: 'page-head' }, h('h1', {}, s.name), s.isDeleted ? h('span', { class: 'badge' }, 'deleted') : null),
      h(
        'p',
        { class: 'muted meta' },
        `Owner ${s.ownerUser.text} · ${s.agentContextName ?? s.agentContextId}`,
        s.conversationContextName ? ` · ${s.conversationContextName}` : '',
        ' · ',
        turnCount,
      ),
      lineageOf(s),
      notice,
      list,
      more,
      outputPanel,
      form,
      dialog,
    );
  }

  function failed(e: unknown, what: string): void {
    if (e instanceof GatewayError) app.onError(e);
    notice.textContent = `${what}: ${(e as Error).message}`;
    if (!notice.isConnected) main.append(notice);
  }

  void load();
  return {
    live: true,
    dispose() {
      disposed = true;
      stopStatus?.();
      output?.stop();
      if (dialog.open) dialog.close();
    },
  };
}
