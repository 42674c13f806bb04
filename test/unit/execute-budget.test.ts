import { LimitedExecuteBudget, type BudgetLimits } from '../../src/budgets/execute-budget';
import { memoryBudgetStores } from '../../src/budgets/memory-budget.adapter';
import { MemorySlotLedger } from '../../src/budgets/slot-ledger';
import { DomainError } from '../../src/domain/errors';
import { createLogger } from '../../src/logger';
import { alice, bob } from '../support/testkit/users';

function budget(limits: BudgetLimits) {
  const stores = memoryBudgetStores(limits);
  return { stores, budget: new LimitedExecuteBudget({ limits, stores, slotTtlMs: 60_000, logger: createLogger('silent') }) };
}

const refusal = async (admitted: Promise<unknown>) => {
  const e = await admitted.then(() => null, (err: unknown) => err);
  expect(e).toBeInstanceOf(DomainError);
  return (e as DomainError).details;
};

describe('execute budget rules', () => {
  it('refuses a full in-flight budget without charging the per-minute one', async () => {
    const { budget: b, stores } = budget({ executesPerMinute: 5, orgExecutesPerMinute: 0, turnsInFlightPerUser: 1 });
    const held = await b.admit(alice, { newExecute: true });
    expect(await refusal(b.admit(alice, { newExecute: true }))).toMatchObject({ budget: 'turnsInFlight', retryAfterSeconds: 1 });
    expect((await stores.userExecutes!.get(JSON.stringify(['acme', 'alice'])))?.consumedPoints).toBe(1);
    held.release();
    held.release();
    const next = await b.admit(alice, { newExecute: true });
    next.release();
    await b.close();
  });

  it("gives back the user's point and the slot when the org's budget refuses", async () => {
    const { budget: b, stores } = budget({ executesPerMinute: 5, orgExecutesPerMinute: 1, turnsInFlightPerUser: 1 });
    (await b.admit(alice, { newExecute: true })).release();
    expect(await refusal(b.admit(bob, { newExecute: true }))).toMatchObject({ budget: 'orgExecutesPerMinute' });
    expect((await stores.userExecutes!.get(JSON.stringify(['acme', 'bob'])))?.consumedPoints ?? 0).toBe(0);
    // bob's slot was given back: a continuation (not a new execute) fits.
    (await b.admit(bob, { newExecute: false })).release();
    await b.close();
  });

  it('charges nothing per minute for a continuation', async () => {
    const { budget: b } = budget({ executesPerMinute: 1, orgExecutesPerMinute: 1, turnsInFlightPerUser: 0 });
    for (let i = 0; i < 3; i++) (await b.admit(alice, { newExecute: false })).release();
    (await b.admit(alice, { newExecute: true })).release();
    expect(await refusal(b.admit(alice, { newExecute: true }))).toMatchObject({ budget: 'executesPerMinute' });
    await b.close();
  });

  it('lets a slot that is not renewed lapse', async () => {
    let now = 1_000;
    const ledger = new MemorySlotLedger(() => now);
    expect(await ledger.hold('k', 'a', 1, 100)).toBe(true);
    expect(await ledger.hold('k', 'b', 1, 100)).toBe(false);
    now += 50;
    await ledger.renew([{ key: 'k', slotId: 'a' }], 100);
    now += 60;
    expect(await ledger.hold('k', 'b', 1, 100)).toBe(false);
    now += 50;
    expect(await ledger.hold('k', 'b', 1, 100)).toBe(true);
  });
});
