import type { Logger } from '../logger';
import type { TurnEventRepository } from './turn-event.repository';

const HOUR = 3_600_000;
/** At most every 10 minutes; more often for short retentions, so the horizon never lags far. */
const MAX_INTERVAL_MS = 10 * 60_000;

/**
 * Deletes stored status events older than the retention on a timer. Every instance runs
 * one; the repository makes concurrent runs safe, so no leader election is needed.
 */
export class EventPruner {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;

  constructor(
    private readonly history: TurnEventRepository,
    private readonly retentionHours: number,
    private readonly logger: Logger,
    private readonly now: () => Date = () => new Date(),
  ) {}

  start(): void {
    const interval = Math.min(MAX_INTERVAL_MS, (this.retentionHours * HOUR) / 4);
    this.timer = setInterval(() => void this.runOnce(), interval);
    this.timer.unref();
  }

  /** One pruning pass; a pass still running is awaited instead of starting a second one. */
  runOnce(): Promise<void> {
    this.running ??= (async () => {
      try {
        const cutoff = new Date(this.now().getTime() - this.retentionHours * HOUR);
        const { orgs, deleted } = await this.history.prune(cutoff);
        if (deleted > 0) this.logger.info({ orgs, deleted }, 'pruned old status events');
      } catch (e) {
        this.logger.warn({ err: e }, 'pruning status events failed; will retry');
      } finally {
        this.running = null;
      }
    })();
    return this.running;
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }
}
