import { MemorySlotLedger } from '../../src/budgets/slot-ledger';

// The budget rules themselves run against every store in test/contracts/execute-budget.test.ts.
describe('execute budget slots', () => {
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
