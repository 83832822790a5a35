#!/usr/bin/env node
// npm run sql:statements [-- <e2e case files>]: brings src/common/sql/statements.json (every SQL
// statement the service runs, which portable-statements.spec.ts PREPAREs on PostgreSQL) up to
// date. It runs the given e2e case files on SQLite with SQL_STATEMENT_LOG set (test/support/
// statement-log.ts records each distinct statement and the file that prepared it) and adds what
// they ran to the list. Without case files it runs every case file and the list becomes exactly
// what they ran (statements no longer run drop out). `--merge <log.jsonl>...` merges logs already
// written instead of running anything.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const LIST = join(ROOT, 'src', 'common', 'sql', 'statements.json');

/** The statements of JSON-lines logs, the sites that are no file of this repository left out. */
function readLogs(files) {
  const out = [];
  for (const file of files) {
    if (!existsSync(file)) continue;
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      if (line.trim() === '') continue;
      const { site, sql } = JSON.parse(line);
      if (typeof sql === 'string' && existsSync(join(ROOT, site))) out.push({ site, sql });
    }
  }
  return out;
}

/** One entry per statement text, ordered by file then text, so diffs stay small. */
function write(statements) {
  const bySql = new Map();
  for (const s of statements) if (!bySql.has(s.sql)) bySql.set(s.sql, s);
  const list = [...bySql.values()].sort((a, b) =>
    a.site === b.site ? (a.sql < b.sql ? -1 : a.sql > b.sql ? 1 : 0) : a.site < b.site ? -1 : 1,
  );
  writeFileSync(LIST, `${JSON.stringify(list, null, 1)}\n`);
  return list.length;
}

const args = process.argv.slice(2);
const old = JSON.parse(readFileSync(LIST, 'utf8'));
if (args[0] === '--merge') {
  const logged = readLogs(args.slice(1));
  const n = write([...old, ...logged]);
  console.log(`${LIST}: ${n} statements (${n - old.length} new)`);
} else {
  const dir = mkdtempSync(join(tmpdir(), 'svc-sql-statements-'));
  const log = join(dir, 'statements.jsonl');
  const all = args.length === 0;
  const files = all
    ? readdirSync(join(ROOT, 'test', 'e2e'))
        .filter((f) => f.endsWith('.e2e-spec.ts'))
        .map((f) => join('test', 'e2e', f))
    : args;
  const run = spawnSync('npm', ['run', 'test:file', '--', '--maxWorkers=2', ...files], {
    cwd: ROOT,
    stdio: 'inherit',
    env: { ...process.env, SQL_STATEMENT_LOG: log },
  });
  const logged = readLogs([log]);
  rmSync(dir, { recursive: true, force: true });
  if (logged.length === 0) {
    console.error('no statement was logged: is the e2e harness calling watchStatements()?');
    process.exit(1);
  }
  const n = write(all ? logged : [...old, ...logged]);
  console.log(`${LIST}: ${n} statements (was ${old.length})`);
  // A failing case file may have stopped before some statements ran: say so, the list is kept.
  if (run.status !== 0) {
    console.error(`some case files failed (exit ${run.status}): run them again once they pass`);
    process.exit(1);
  }
}
