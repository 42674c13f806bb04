import { Table, TableIndex, type MigrationInterface, type QueryRunner, type TableColumnOptions } from 'typeorm';
import { columnTypes, dialectOf } from '../dialect';

/**
 * Sessions, turns, participants, durable turn events and the context directory.
 * Frozen once released: later changes go into new migrations.
 */
export class InitialSchema1764000000000 implements MigrationInterface {
  name = 'InitialSchema1764000000000';

  async up(q: QueryRunner): Promise<void> {
    const t = columnTypes(dialectOf(q.connection.options.type));
    const str = (name: string, length: number, isNullable = false): TableColumnOptions => ({
      name,
      type: 'varchar',
      length: String(length),
      isNullable,
    });
    const date = (name: string, isNullable = false): TableColumnOptions => ({
      name,
      type: String(t.datetime.type),
      ...(t.datetime.precision ? { precision: t.datetime.precision } : {}),
      isNullable,
    });
    const long = (name: string, isNullable = false): TableColumnOptions => ({ name, type: String(t.longText), isNullable });
    const text = (name: string, isNullable = false): TableColumnOptions => ({ name, type: String(t.text), isNullable });
    const bool = (name: string): TableColumnOptions => ({ name, type: 'boolean', default: '0', isNullable: false });
    const int = (name: string, isNullable = false, def?: string): TableColumnOptions => ({
      name,
      type: String(t.integer),
      isNullable,
      ...(def === undefined ? {} : { default: def }),
    });
    const bigint = (name: string, def?: string): TableColumnOptions => ({
      name,
      type: 'bigint',
      isNullable: false,
      ...(def === undefined ? {} : { default: def }),
    });
    const double = (name: string): TableColumnOptions => ({ name, type: String(t.double), isNullable: true });
    const pk = (c: TableColumnOptions): TableColumnOptions => ({ ...c, isPrimary: true });

    await q.createTable(
      new Table({
        name: 'agent_sessions',
        columns: [
          pk(str('id', 36)),
          str('org_id', 64),
          str('org_name', 200),
          str('owner_user_id', 64),
          str('owner_user_name', 200),
          { ...str('name', 200), ...t.caseInsensitive },
          str('session_key', 100, true),
          text('description', true),
          bool('is_public'),
          bool('is_draft'),
          bool('is_deleted'),
          str('category', 100, true),
          date('creation_date'),
          date('last_updated_date'),
          str('agent_context_id', 64),
          str('conversation_context_id', 64, true),
          str('workspace_id', 200, true),
          str('repo', 200, true),
          str('default_language', 64, true),
          int('turn_count', false, '0'),
          str('last_turn_status', 16, true),
          date('last_turn_date', true),
          bigint('input_tokens', '0'),
          bigint('output_tokens', '0'),
          double('estimated_cost_usd'),
          bool('usage_estimated'),
        ],
        indices: [
          new TableIndex({ name: 'idx_sessions_org_updated', columnNames: ['org_id', 'last_updated_date', 'id'] }),
          new TableIndex({ name: 'idx_sessions_org_created', columnNames: ['org_id', 'creation_date', 'id'] }),
          new TableIndex({ name: 'idx_sessions_org_name', columnNames: ['org_id', 'name', 'id'] }),
          new TableIndex({ name: 'idx_sessions_org_owner', columnNames: ['org_id', 'owner_user_id'] }),
        ],
      }),
    );

    await q.createTable(
      new Table({
        name: 'agent_session_turns',
        columns: [
          pk(str('id', 36)),
          str('session_id', 36),
          str('org_id', 64),
          int('sequence_number'),
          str('created_by_user_id', 64),
          str('created_by_user_name', 200),
          date('creation_date'),
          str('status', 16),
          date('status_time_stamp'),
          str('mode', 64),
          str('conversation_id', 64, true),
          str('openai_model', 100, true),
          str('openai_response_id', 200, true),
          str('previous_openai_response_id', 200, true),
          date('openai_response_received_date', true),
          date('openai_chain_expires_date', true),
          text('instruction_summary'),
          str('full_instruction_url', 512, true),
          text('agent_answer_summary', true),
          str('full_agent_answer_url', 512, true),
          str('openai_request_payload_url', 512, true),
          str('openai_response_payload_url', 512, true),
          long('chunk_refs'),
          long('active_file_refs'),
          long('pending_tool_calls'),
          long('warnings'),
          long('errors'),
          int('input_tokens', true),
          int('output_tokens', true),
          bool('usage_estimated'),
          double('estimated_cost_usd'),
          str('lease_owner', 64, true),
          date('lease_expires_at', true),
        ],
        indices: [
          new TableIndex({
            name: 'uq_turns_session_sequence',
            columnNames: ['session_id', 'sequence_number'],
            isUnique: true,
          }),
          new TableIndex({ name: 'idx_turns_status_lease', columnNames: ['status', 'lease_expires_at'] }),
        ],
      }),
    );

    await q.createTable(
      new Table({
        name: 'agent_session_participants',
        columns: [pk(str('session_id', 36)), pk(str('user_id', 64)), str('org_id', 64), str('user_name', 200), date('joined_date')],
        indices: [new TableIndex({ name: 'idx_participants_org_user', columnNames: ['org_id', 'user_id'] })],
      }),
    );

    await q.createTable(
      new Table({
        name: 'turn_events',
        columns: [
          pk({ name: 'id', type: 'bigint', isNullable: false }),
          str('org_id', 64),
          str('session_id', 36),
          str('turn_id', 36),
          int('sequence_number'),
          str('previous_status', 16, true),
          str('status', 16),
          date('status_time_stamp'),
          str('created_by_user_id', 64),
          str('created_by_user_name', 200),
          date('recorded_date'),
        ],
        indices: [
          new TableIndex({ name: 'idx_events_org_id', columnNames: ['org_id', 'id'] }),
          new TableIndex({ name: 'idx_events_session_id', columnNames: ['session_id', 'id'] }),
          new TableIndex({ name: 'idx_events_recorded', columnNames: ['recorded_date'] }),
        ],
      }),
    );

    await q.createTable(
      new Table({
        name: 'event_counters',
        columns: [pk(str('name', 32)), bigint('value')],
      }),
    );
    await q.query(`INSERT INTO event_counters (name, value) VALUES ('turn_events', 0)`);

    const contextColumns = (): TableColumnOptions[] => [
      pk(str('id', 64)),
      str('org_id', 64),
      str('name', 200),
      text('description', true),
      date('creation_date'),
      date('last_updated_date'),
    ];
    await q.createTable(
      new Table({
        name: 'agent_contexts',
        columns: [...contextColumns(), str('vector_collection', 200), str('default_model', 100)],
        indices: [new TableIndex({ name: 'idx_agent_contexts_org', columnNames: ['org_id', 'name'] })],
      }),
    );
    await q.createTable(
      new Table({
        name: 'conversation_contexts',
        columns: [
          ...contextColumns(),
          long('system_prompt'),
          str('model', 100, true),
          double('temperature'),
          long('tools'),
        ],
        indices: [new TableIndex({ name: 'idx_conversation_contexts_org', columnNames: ['org_id', 'name'] })],
      }),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of [
      'conversation_contexts',
      'agent_contexts',
      'event_counters',
      'turn_events',
      'agent_session_participants',
      'agent_session_turns',
      'agent_sessions',
    ]) {
      await q.dropTable(table);
    }
  }
}
