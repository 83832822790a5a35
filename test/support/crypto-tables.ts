import Database from 'better-sqlite3';

/** An in-memory SQLite database with the tables the crypto feed reads and writes, as the migration makes them. */
export function cryptoDatabase(): Database.Database {
  const db = new Database(':memory:');
  db.exec(`
    CREATE TABLE crypto_prices (symbol TEXT PRIMARY KEY, price_cents INTEGER, steps INTEGER, as_of TEXT);
    CREATE TABLE crypto_candles (symbol TEXT, interval TEXT, bucket TEXT, open_cents INTEGER,
      high_cents INTEGER, low_cents INTEGER, close_cents INTEGER, PRIMARY KEY (symbol, interval, bucket));
    CREATE TABLE markets (id TEXT PRIMARY KEY, status TEXT, close_time TEXT, index_symbol TEXT, strike_cents INTEGER);
  `);
  return db;
}
