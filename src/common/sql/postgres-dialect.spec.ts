import { describe, expect, it } from '@jest/globals';
import { toPostgres } from './postgres-dialect.js';

describe('toPostgres: parameters', () => {
  it('numbers positional ? in order, names null', () => {
    expect(toPostgres('SELECT * FROM t WHERE a = ? AND b > ? LIMIT ?')).toEqual({
      text: 'SELECT * FROM t WHERE a = $1 AND b > $2 LIMIT $3',
      names: null,
    });
  });

  it('numbers @name, :name and $name by first use; a repeated name is one parameter', () => {
    expect(
      toPostgres('UPDATE t SET a = @a, b = :b, c = $c WHERE d = @a AND e < @now AND f > @now'),
    ).toEqual({
      text: 'UPDATE t SET a = $1, b = $2, c = $3 WHERE d = $1 AND e < $4 AND f > $4',
      names: ['a', 'b', 'c', 'now'],
    });
  });

  it('a statement without parameters keeps its text and has names null', () => {
    expect(toPostgres('DELETE FROM t')).toEqual({ text: 'DELETE FROM t', names: null });
  });

  it('leaves ?, @, : and $ inside string literals and quoted identifiers alone', () => {
    const sql = `SELECT 'a?b @c :d $e', 'it''s ?', "we?ird@", x FROM t WHERE y = ? AND z = '?'`;
    expect(toPostgres(sql)).toEqual({
      text: `SELECT 'a?b @c :d $e', 'it''s ?', "we?ird@", x FROM t WHERE y = $1 AND z = '?'`,
      names: null,
    });
  });

  it('leaves comments alone', () => {
    expect(toPostgres('SELECT 1 -- is it? @x\n, ? /* :y ? */ FROM t')).toEqual({
      text: 'SELECT 1 -- is it? @x\n, $1 /* :y ? */ FROM t',
      names: null,
    });
  });

  it('a :: cast is not a parameter', () => {
    expect(toPostgres('SELECT @a::bigint, x::text FROM t')).toEqual({
      text: 'SELECT $1::bigint, x::text FROM t',
      names: ['a'],
    });
  });

  it("turns SQLite's backtick identifiers into double-quoted ones", () => {
    expect(toPostgres('SELECT `order` FROM t')).toEqual({
      text: 'SELECT "order" FROM t',
      names: null,
    });
  });

  it('refuses what it cannot carry over rather than guess', () => {
    expect(() => toPostgres('SELECT ? , @a')).toThrow(/mixed/);
    expect(() => toPostgres('SELECT @a, ?')).toThrow(/mixed/);
    expect(() => toPostgres('SELECT ?1')).toThrow(/numbered/);
    expect(() => toPostgres('SELECT $1')).toThrow(/\$N/);
    expect(() => toPostgres("SELECT 'open")).toThrow(/unterminated/);
    expect(() => toPostgres('SELECT "open')).toThrow(/unterminated/);
    expect(() => toPostgres('SELECT 1 /* open')).toThrow(/unterminated/);
  });

  it('is deterministic: the same text gives an equal result', () => {
    const sql = 'SELECT * FROM t WHERE a = @a AND b = ?1x';
    expect(() => toPostgres(sql)).toThrow();
    const ok = 'SELECT * FROM t WHERE a = @a';
    expect(toPostgres(ok)).toEqual(toPostgres(ok));
  });
});

describe('toPostgres: json_each', () => {
  it('a JSON array parameter read as rows becomes json_array_elements_text', () => {
    expect(toPostgres('SELECT id FROM t WHERE id IN (SELECT value FROM json_each (?))')).toEqual({
      text: 'SELECT id FROM t WHERE id IN (SELECT value FROM json_array_elements_text ($1))',
      names: null,
    });
  });

  it('not a column or a string of that name', () => {
    expect(toPostgres("SELECT json_each, 'json_each(x)' FROM t").text).toBe(
      "SELECT json_each, 'json_each(x)' FROM t",
    );
  });
});

describe('toPostgres: INSERT OR IGNORE', () => {
  it('becomes INSERT ... ON CONFLICT DO NOTHING', () => {
    expect(toPostgres('INSERT OR IGNORE INTO t (a, b) VALUES (?, ?)')).toEqual({
      text: 'INSERT INTO t (a, b) VALUES ($1, $2) ON CONFLICT DO NOTHING',
      names: null,
    });
  });

  it('whatever the case and spacing, and before a top-level RETURNING', () => {
    expect(
      toPostgres('\n  insert  or\n ignore into t (a) VALUES (@a)\n  RETURNING a, (SELECT 1)\n'),
    ).toEqual({
      text: '\n  INSERT INTO t (a) VALUES ($1)\n  ON CONFLICT DO NOTHING RETURNING a, (SELECT 1)\n',
      names: ['a'],
    });
  });

  it('from a SELECT; a trailing semicolon goes', () => {
    expect(toPostgres('INSERT OR IGNORE INTO t (a) SELECT a FROM u WHERE b = ?;')).toEqual({
      text: 'INSERT INTO t (a) SELECT a FROM u WHERE b = $1 ON CONFLICT DO NOTHING',
      names: null,
    });
  });

  it('per statement of a script; a RETURNING inside a string or subquery does not count', () => {
    expect(
      toPostgres(
        "INSERT OR IGNORE INTO t (a) VALUES ('RETURNING'); INSERT OR IGNORE INTO u SELECT 1 FROM v; DELETE FROM w",
      ),
    ).toEqual({
      text: "INSERT INTO t (a) VALUES ('RETURNING') ON CONFLICT DO NOTHING; INSERT INTO u SELECT 1 FROM v ON CONFLICT DO NOTHING; DELETE FROM w",
      names: null,
    });
  });

  it('leaves INSERT OR REPLACE and a plain INSERT as they are (a conflict target is needed)', () => {
    expect(toPostgres('INSERT INTO t (a) VALUES (?)').text).toBe('INSERT INTO t (a) VALUES ($1)');
    expect(toPostgres('INSERT OR REPLACE INTO t (a) VALUES (?)').text).toBe(
      'INSERT OR REPLACE INTO t (a) VALUES ($1)',
    );
  });
});
