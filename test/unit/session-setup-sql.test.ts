import { sessionSetupSql } from '../../src/persistence/mysql-pool-guard';

describe('what a pooled MySQL connection is set to', () => {
  it('limits every statement on the server and reads committed rows, per dialect', () => {
    expect(sessionSetupSql('mariadb', 30_000, true)).toBe("SET SESSION max_statement_time = 30, SESSION tx_isolation = 'READ-COMMITTED'");
    expect(sessionSetupSql('mysql', 1_500, true)).toBe("SET SESSION max_execution_time = 1500, SESSION transaction_isolation = 'READ-COMMITTED'");
  });

  it('stays at the server default isolation where a statement-based binary log could not record READ COMMITTED writes', () => {
    expect(sessionSetupSql('mariadb', 30_000, false)).toBe('SET SESSION max_statement_time = 30');
    expect(sessionSetupSql('mysql', 30_000, false)).toBe('SET SESSION max_execution_time = 30000');
  });
});
