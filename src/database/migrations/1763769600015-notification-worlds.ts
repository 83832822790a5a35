import { TableColumn, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Platform database: each notification belongs to a world (`live` or `test`), read only from that
 * world and cleared with the paper world on a sandbox reset. Notifications written before are
 * placed in the world of what they are about: a tier decision in its API key's, a webhook
 * suspension in its endpoint's (both live unless that key or endpoint is a test one).
 */
export class NotificationWorlds1763769600015 implements MigrationInterface {
  name = 'NotificationWorlds1763769600015';

  async up(q: QueryRunner): Promise<void> {
    await q.addColumn(
      'notifications',
      new TableColumn({ name: 'environment', type: 'varchar', length: '4', default: "'live'" }),
    );
    const rows = (await q.query('SELECT id, type, data FROM notifications')) as {
      id: string;
      type: string;
      data: string;
    }[];
    for (const r of rows) {
      const data = parse(r.data);
      const table =
        typeof data.key_id === 'string'
          ? { name: 'api_keys', id: data.key_id }
          : typeof data.endpoint_id === 'string'
            ? { name: 'webhook_endpoints', id: data.endpoint_id }
            : null;
      if (table === null) continue;
      const owner = (await q.manager
        .createQueryBuilder()
        .select('t.environment', 'environment')
        .from(table.name, 't')
        .where('t.id = :id', { id: table.id })
        .getRawOne()) as { environment: string } | undefined;
      if (owner?.environment !== 'test') continue;
      await q.manager
        .createQueryBuilder()
        .update('notifications')
        .set({ environment: 'test' })
        .where('id = :id', { id: r.id })
        .execute();
    }
    await q.dropIndex('notifications', 'idx_ntf_user');
    await q.createIndex(
      'notifications',
      new TableIndex({ name: 'idx_ntf_user_world', columnNames: ['user_id', 'environment', 'id'] }),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropIndex('notifications', 'idx_ntf_user_world');
    await q.createIndex(
      'notifications',
      new TableIndex({ name: 'idx_ntf_user', columnNames: ['user_id', 'id'] }),
    );
    await q.dropColumn('notifications', 'environment');
  }
}

function parse(text: string): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(text);
    return v !== null && typeof v === 'object' ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
