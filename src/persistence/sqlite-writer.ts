import type { EntityManager, QueryRunner } from 'typeorm';
import type { SqlResult, SqlTransaction, SqlValue, Statement } from './sql';

/** Where a plain-statement transaction whose statements are known up front goes: the write thread (SqliteWriteThread). */
export interface WholeTransactions {
  transact(statements: readonly Statement[]): Promise<SqlResult[]>;
  /** Resolves once nothing sent is still to be answered. */
  idle(): Promise<void>;
}

/**
 * The embedded database's writes, over two connections that must never write at once (one
 * would wait on SQLite's lock, on the event loop or the thread). A plain-statement
 * transaction that commits without reading first (`commitWith` its first call: every write
 * of the execute path) goes whole to the write thread, which commits those asked for
 * together under one COMMIT. One that reads first (a locked fallback), and every ORM
 * transaction, runs on the main connection, one at a time, once the thread has answered
 * everything sent to it; meanwhile nothing more is sent. `mainTx` runs statements on the
 * main connection inside the transaction this writer opened on `runner`.
 */
export class SqliteWriter {
  /** The last main-connection transaction asked for: the next waits for it. */
  private tail: Promise<void> = Promise.resolve();
  /** Main-connection transactions waiting or running: whole transactions wait until there are none. */
  private onMain = 0;

  constructor(
    private readonly thread: WholeTransactions,
    private readonly runner: QueryRunner,
    private readonly mainTx: SqlTransaction,
    private readonly ormTransaction: <T>(work: (em: EntityManager) => Promise<T>) => Promise<T>,
  ) {}

  /** Database.sqlTransaction on SQLite. */
  async grouped<T>(work: (tx: SqlTransaction) => Promise<T>): Promise<T> {
    let release: (() => void) | null = null;
    const onMain = async (): Promise<SqlTransaction> => {
      if (!release) {
        release = await this.lock();
        await this.runner.startTransaction();
      }
      return this.mainTx;
    };
    const tx: SqlTransaction = {
      rows: async <R>(sql: string, params: readonly SqlValue[] = []) => (await onMain()).rows<R>(sql, params),
      commitWith: async (statements) => {
        if (release) return this.mainTx.commitWith(statements);
        while (this.onMain > 0) await this.tail;
        return this.thread.transact(statements);
      },
    };
    try {
      const result = await work(tx);
      if (release) await this.runner.commitTransaction();
      return result;
    } catch (e) {
      if (release && this.runner.isTransactionActive) await this.runner.rollbackTransaction().catch(() => undefined);
      throw e;
    } finally {
      (release as (() => void) | null)?.();
    }
  }

  /** Database.transaction on SQLite: an ORM transaction, on the main connection. */
  async alone<T>(work: (em: EntityManager) => Promise<T>): Promise<T> {
    const release = await this.lock();
    try {
      return await this.ormTransaction(work);
    } finally {
      release();
    }
  }

  /** Resolves once everything asked for so far has committed (or failed): before the database closes. */
  async settled(): Promise<void> {
    await this.tail;
    await this.thread.idle();
  }

  /** Waits for the main-connection transactions before, then for the thread to have answered everything. */
  private async lock(): Promise<() => void> {
    this.onMain++;
    const previous = this.tail;
    let release!: () => void;
    this.tail = new Promise((resolve) => (release = resolve));
    await previous;
    await this.thread.idle();
    return () => {
      this.onMain--;
      release();
    };
  }
}
