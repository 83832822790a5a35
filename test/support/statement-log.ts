import Database from 'better-sqlite3';
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join, relative } from 'node:path';
import { ROOT } from './process.js';

/**
 * Every SQL text the service hands to better-sqlite3 (`prepare`, `exec`) during the e2e tests,
 * checked against the list the PostgreSQL statement check PREPAREs (src/common/sql/
 * statements.json, see portable-statements.spec.ts): a statement missing from it is one nobody
 * has checked on PostgreSQL, and the app's close() fails naming it. With SQL_STATEMENT_LOG=<file>
 * each distinct statement is also appended there as a JSON line `{site, sql}`; `npm run
 * sql:statements` merges such logs into the list.
 *
 * TypeORM's own SQL (repositories, migrations) is left out: TypeORM writes it per driver.
 */
export const STATEMENTS_FILE = fileURLToPath(
  new URL('../../src/common/sql/statements.json', import.meta.url),
);

export interface ListedStatement {
  /** The source file that prepared it. */
  site: string;
  sql: string;
}

type Method = 'prepare' | 'exec';

const unlisted = new Map<string, string>();
let installed = false;

/** Installs the hook once per module registry (Jest gives each test file its own copy). */
export function watchStatements(): void {
  if (installed) return;
  installed = true;
  const log = process.env.SQL_STATEMENT_LOG;
  const listed = new Set(
    (JSON.parse(readFileSync(STATEMENTS_FILE, 'utf8')) as ListedStatement[]).map((s) => s.sql),
  );
  const seen = new Set<string>();
  const proto = Database.prototype as unknown as Record<Method, (sql: string) => unknown>;
  for (const method of ['prepare', 'exec'] as const) {
    const original = proto[method];
    proto[method] = function (this: unknown, sql: string, ...rest: unknown[]) {
      if (typeof sql === 'string' && !seen.has(sql)) {
        seen.add(sql);
        const site = siteOf(new Error().stack ?? '');
        if (site !== null) {
          if (!listed.has(sql)) unlisted.set(sql, site);
          if (log !== undefined && log !== '') {
            appendFileSync(log, `${JSON.stringify({ site, sql })}\n`);
          }
        }
      }
      return (original as (...a: unknown[]) => unknown).call(this, sql, ...rest);
    };
  }
}

/**
 * Throws naming the statements run since the last call that the list lacks (each is reported
 * once). While SQL_STATEMENT_LOG collects statements for the list, nothing is refused.
 */
export function assertStatementsListed(): void {
  const missing = [...unlisted].map(([sql, site]) => `${site}: ${sql}`);
  unlisted.clear();
  if (missing.length === 0 || (process.env.SQL_STATEMENT_LOG ?? '') !== '') return;
  throw new Error(
    `SQL not in src/common/sql/statements.json (unchecked on PostgreSQL): write it portably (docs/sections/pgdialect.md), then run npm run sql:statements -- <the e2e case files that run it>:\n  ${missing.join('\n  ')}`,
  );
}

/**
 * The service file that ran the statement: the first stack frame outside this hook and the SQL
 * port (src/common/sql, src/common/sqlite); null for a library's own SQL (TypeORM).
 */
function siteOf(stack: string): string | null {
  for (const line of stack.split('\n').slice(1)) {
    const m = /\(?((?:file:\/\/)?\/[^():]+):\d+:\d+\)?\s*$/.exec(line);
    if (m === null) continue;
    const file = m[1].replace(/^file:\/\//, '');
    if (file.endsWith('/statement-log.ts')) continue;
    if (file.includes('/node_modules/')) return null;
    const rel = relative(ROOT, file);
    if (rel.startsWith('src/common/sql/') || rel.startsWith('src/common/sqlite/')) continue;
    // A library's source-mapped frame can name a src/ path of its own package: only files of
    // this repository count.
    return rel.startsWith('src/') && existsSync(join(ROOT, rel)) ? rel : null;
  }
  return null;
}
