import { Table, TableColumn, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Engine database (one per world): the crypto reference indices. `crypto_prices` holds each
 * symbol's latest price (integer cents), when it was set (`as_of`) and how many walk steps it has
 * taken (`steps`: a restart continues the seeded path from there). `crypto_candles` holds the
 * open/high/low/close in cents of each (symbol, interval 1m|1h|1d, bucket start), upserted as
 * ticks arrive; the primary key serves both the history pages (keyset on bucket) and the
 * retention delete. Markets gain `index_symbol` and `strike_cents` (both null but for crypto
 * markets that resolve by themselves from their index). Schema API only, so it ports to
 * PostgreSQL.
 */
export class CryptoPrices1763769600021 implements MigrationInterface {
  name = 'CryptoPrices1763769600021';

  async up(q: QueryRunner): Promise<void> {
    await q.createTable(
      new Table({
        name: 'crypto_prices',
        columns: [
          { name: 'symbol', type: 'varchar', length: '16', isPrimary: true },
          { name: 'price_cents', type: 'bigint' },
          { name: 'steps', type: 'bigint', default: 0 },
          { name: 'as_of', type: 'varchar', length: '30' },
        ],
      }),
    );
    await q.createTable(
      new Table({
        name: 'crypto_candles',
        columns: [
          { name: 'symbol', type: 'varchar', length: '16', isPrimary: true },
          { name: 'interval', type: 'varchar', length: '4', isPrimary: true },
          { name: 'bucket', type: 'varchar', length: '30', isPrimary: true },
          { name: 'open_cents', type: 'bigint' },
          { name: 'high_cents', type: 'bigint' },
          { name: 'low_cents', type: 'bigint' },
          { name: 'close_cents', type: 'bigint' },
        ],
      }),
    );
    await q.addColumns('markets', [
      new TableColumn({ name: 'index_symbol', type: 'varchar', length: '16', isNullable: true }),
      new TableColumn({ name: 'strike_cents', type: 'bigint', isNullable: true }),
    ]);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropColumn('markets', 'strike_cents');
    await q.dropColumn('markets', 'index_symbol');
    await q.dropTable('crypto_candles');
    await q.dropTable('crypto_prices');
  }
}
