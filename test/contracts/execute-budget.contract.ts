import { LimitedExecuteBudget, type BudgetLimits, type BudgetStores } from '../../src/budgets/execute-budget';
import { DomainError } from '../../src/domain/errors';
import { createLogger } from '../../src/logger';
import { alice, bob } from '../support/testkit/users';

/** Fresh stores (no counts yet) for these limits. */
export type BudgetStoresFactory = (limits: BudgetLimits) => Promise<BudgetStores>;

const refusal = async (admitted: Promise<unknown>) => {
  const e = await admitted.then(
    () => null,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(DomainError);
  return (e as DomainError).details;
};

/** The execute budget rules (execute-budget.port.ts) over every place the counts may live. */
export function executeBudgetContract(open: BudgetStoresFactory): void {
  const budget = async (limits: BudgetLimits) => {
    const stores = await open(limits);
    return { stores, budget: new LimitedExecuteBudget({ limits, stores, slotTtlMs: 60_000, logger: createLogger('silent') }) };
  };

  it('refuses a full in-flight budget without charging the per-minute one', async () => {
    const { budget: b, stores } = await budget({ executesPerMinute: 5, orgExecutesPerMinute: 0, turnsInFlightPerUser: 1 });
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
    const { budget: b, stores } = await budget({ executesPerMinute: 5, orgExecutesPerMinute: 1, turnsInFlightPerUser: 1 });
    (await b.admit(alice, { newExecute: true })).release();
    expect(await refusal(b.admit(bob, { newExecute: true }))).toMatchObject({ budget: 'orgExecutesPerMinute' });
    expect((await stores.userExecutes!.get(JSON.stringify(['acme', 'bob'])))?.consumedPoints ?? 0).toBe(0);
    // bob's slot was given back: a continuation (not a new execute) fits.
    (await b.admit(bob, { newExecute: false })).release();
    await b.close();
  });

  it('charges nothing per minute for a continuation', async () => {
    const { budget: b } = await budget({ executesPerMinute: 1, orgExecutesPerMinute: 1, turnsInFlightPerUser: 0 });
    for (let i = 0; i < 3; i++) (await b.admit(alice, { newExecute: false })).release();
    (await b.admit(alice, { newExecute: true })).release();
    expect(await refusal(b.admit(alice, { newExecute: true }))).toMatchObject({ budget: 'executesPerMinute' });
    await b.close();
  });
}
