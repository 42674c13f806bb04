import type { ContextCatalog } from '../contexts/context-directory.port';
import type { Caller } from '../domain/caller';
import { DEFAULT_MODEL_PRICING, priceOf } from '../domain/pricing';
import { seededRandom } from '../domain/seeded-random';
import { costOf } from '../domain/usage';
import type { TurnStore } from '../sessions/session-store.port';

export interface SeedOptions {
  readonly orgId: string;
  readonly orgName: string;
  readonly users: number;
  readonly sessions: number;
  readonly turnsPerSession: number;
  readonly randomSeed: number;
  /** Session ids chosen up front (by index), so that a second run can tell what it wrote before. */
  readonly sessionIdOf?: (index: number) => string;
  /** Sessions (by id) a previous run wrote: left as they are. */
  readonly existing?: ReadonlySet<string>;
}

export interface SeedResult {
  readonly sessions: number;
  readonly turns: number;
  readonly agentContexts: string[];
  readonly conversationContexts: string[];
  readonly agentContextIds: string[];
  readonly conversationContextIds: string[];
}

const AGENT_CONTEXTS = [
  { name: 'Backend Platform', vectorCollection: 'backend-platform', defaultModel: 'gpt-4.1-mini', description: 'Services, APIs and data access' },
  { name: 'Design System', vectorCollection: 'design-system', defaultModel: 'gpt-4.1-mini', description: 'UI primitives and tokens' },
];
const CONVERSATION_CONTEXTS = [
  { name: 'Backend Refactor', systemPrompt: 'You are a careful senior backend engineer. Prefer small, reviewable changes.', temperature: 0.2 },
  { name: 'Design System Work', systemPrompt: 'You help maintain an accessible component library.', temperature: 0.4 },
];
const TOPICS = ['auth middleware', 'billing export', 'session list view', 'button variants', 'rate limiter', 'search index', 'token refresh', 'color tokens', 'audit log', 'retry policy'];
const VERBS = ['Refactor', 'Fix', 'Document', 'Speed up', 'Review', 'Test'];
const REPOS = ['acme/api', 'acme/web', 'acme/design-system'];
const MODEL = 'gpt-4.1-mini';
/** With a clock, the demo history spreads over this many days up to now (the usage chart's default window). */
const HISTORY_DAYS = 30;

/** The clock the session store reads; seeding sets it before each write. */
export interface SeedClock {
  set(at: Date): void;
}

/**
 * Deterministic demo data, written only through the turn lifecycle and the context directory.
 * Given the store's clock, sessions are written one after another with their turns spread
 * over the last 30 days (oldest first, as a real history would be); without one, all at once, now.
 */
export async function seedDemoData(
  services: {
    sessions: Pick<TurnStore, 'createSession' | 'addTurn' | 'completeTurn' | 'failTurn' | 'cancelTurn'>;
    contexts: ContextCatalog;
    clock?: SeedClock;
  },
  options: SeedOptions,
  progress: (sessionsDone: number) => void = () => undefined,
): Promise<SeedResult> {
  const random = seededRandom(options.randomSeed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const users: Caller[] = Array.from({ length: options.users }, (_, i) => ({
    userId: `user-${i + 1}`,
    userName: `User ${i + 1}`,
    orgId: options.orgId,
    orgName: options.orgName,
    roles: i === 0 ? ['admin'] : [],
  }));
  const admin = users[0] as Caller;

  const agentContexts = await ensureContexts(
    await services.contexts.listAgentContexts(options.orgId),
    AGENT_CONTEXTS,
    (c) => services.contexts.upsertAgentContext(admin, c),
  );
  const conversationContexts = await ensureContexts(
    await services.contexts.listConversationContexts(options.orgId),
    CONVERSATION_CONTEXTS,
    (c) => services.contexts.upsertConversationContext(admin, c),
  );

  let turns = 0;
  let done = 0;
  const { clock } = services;
  const historyStart = Date.now() - HISTORY_DAYS * 24 * 3600 * 1000;
  const seedSession = async (index: number) => {
    const id = options.sessionIdOf?.(index);
    if (id !== undefined && options.existing?.has(id)) return void progress(++done);
    const owner = users[index % users.length] as Caller;
    const which = index % 2;
    const isPublic = random() < 0.35;
    // Session i starts at its share of the history; its turns follow a few minutes apart.
    let at = historyStart + (index / options.sessions) * HISTORY_DAYS * 24 * 3600 * 1000;
    const tick = (): Date => {
      if (!clock) return new Date();
      at += (1 + random() * 9) * 60 * 1000;
      const now = new Date(Math.min(at, Date.now()));
      clock.set(now);
      return now;
    };
    tick();
    const session = await services.sessions.createSession(owner, {
      ...(id === undefined ? {} : { id }),
      name: `${pick(VERBS)} ${pick(TOPICS)} #${index + 1}`,
      description: random() < 0.5 ? 'Seeded demo session' : null,
      category: pick(['maintenance', 'feature', 'investigation']),
      isPublic,
      agentContextId: (agentContexts[which] as { id: string }).id,
      conversationContextId: (conversationContexts[which] as { id: string }).id,
      workspaceId: `${owner.userId}.laptop`,
      repo: pick(REPOS),
      defaultLanguage: pick(['typescript', 'csharp', 'python']),
    });
    for (let n = 0; n < options.turnsPerSession; n++) {
      // Public sessions collect turns from anyone; private ones from the owner and the admin.
      const author = isPublic ? pick(users) : random() < 0.2 ? admin : owner;
      tick();
      const turn = await services.sessions.addTurn(author, session.id, {
        instructionSummary: `${pick(VERBS)} the ${pick(TOPICS)} (step ${n + 1})`,
        mode: random() < 0.7 ? 'ask' : 'edit',
        openAIModel: MODEL,
      });
      turns++;
      const isLast = n === options.turnsPerSession - 1;
      const roll = random();
      if (isLast && roll < 0.15) continue; // leave some sessions working on their last turn
      const finished = tick();
      if (roll < 0.75 || (!isLast && roll < 0.85)) {
        const input = 200 + Math.floor(random() * 2000);
        const output = 50 + Math.floor(random() * 800);
        await services.sessions.completeTurn(owner, session.id, turn.id, {
          agentAnswerSummary: `Here is what I changed in the ${pick(TOPICS)}.`,
          fullAgentAnswerUrl: null,
          openAIResponseId: `resp_seed_${session.id.slice(0, 8)}_${n}`,
          openAIResponseReceivedDate: finished,
          usage: {
            inputTokens: input,
            outputTokens: output,
            totalTokens: input + output,
            estimatedCostUsd: costOf(priceOf(DEFAULT_MODEL_PRICING, MODEL), input, output),
            isEstimated: false,
          },
        });
      } else if (roll < 0.92) {
        await services.sessions.failTurn(owner, session.id, turn.id, { errors: ['The provider timed out (seeded failure).'] });
      } else {
        await services.sessions.cancelTurn(author, session.id, turn.id);
      }
    }
    progress(++done);
  };

  // A few sessions at a time (quick on MySQL, harmless on SQLite, where writes are serialised
  // anyway), but one at a time on a clock, which all of them share.
  const queue = Array.from({ length: options.sessions }, (_, i) => i);
  await Promise.all(
    Array.from({ length: clock ? 1 : 8 }, async () => {
      for (let i = queue.shift(); i !== undefined; i = queue.shift()) await seedSession(i);
    }),
  );
  return {
    sessions: options.sessions,
    turns,
    agentContexts: agentContexts.map((c) => c.name),
    conversationContexts: conversationContexts.map((c) => c.name),
    agentContextIds: agentContexts.map((c) => c.id),
    conversationContextIds: conversationContexts.map((c) => c.id),
  };
}

async function ensureContexts<T extends { name: string }, R extends { id: string; name: string }>(
  existing: readonly R[],
  wanted: readonly T[],
  create: (c: T) => Promise<R>,
): Promise<R[]> {
  const result: R[] = [];
  for (const w of wanted) result.push(existing.find((e) => e.name === w.name) ?? (await create(w)));
  return result;
}
