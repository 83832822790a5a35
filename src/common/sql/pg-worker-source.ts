/**
 * The program of the PostgreSQL worker thread (see pg-sync-bridge.ts), run with `eval` so it
 * needs no compiled file beside it (Jest runs the TypeScript sources): `pg` is required from the
 * path the caller resolved.
 *
 * Protocol, on the MessagePort handed over in workerData: requests `{ id, cid, op, ... }`, each
 * answered once by `{ id, ok, ... }`, after which the worker bumps the shared counter and wakes
 * the caller (Atomics.notify). Requests of one connection run in arrival order; replies carry
 * the request's id, so a caller waiting synchronously for its own reply can stash others (the
 * async `submit` of a batch).
 *
 * Ops: open { url, options } (one pg.Client per connection id; a later request of a connection
 * that failed to open fails with that error), query { text, values, name, rowMode, before }, exec
 * { text, before, atomic } (simple protocol, several statements; atomic: it ends a transaction,
 * which is rolled back if any of it fails), batch
 * { statements } (one transaction), close. `before` is what the connection had not sent yet:
 * transaction control (BEGIN, SAVEPOINT) and statements deferred in a transaction ({ text,
 * values }); they go to the server as ONE simple-protocol query, the values inlined as quoted
 * literals (escapeLiteral; an untyped literal takes the type a parameter would), together with
 * an exec's own text: a transaction of deferred writes is one round trip.
 *
 * Results are made to read as SQLite's: int8 and numeric as numbers (an int8 beyond 2^53 fails
 * the statement rather than lose digits), booleans as 1/0, dates and timestamps as their text.
 */
export const PG_WORKER_SOURCE = String.raw`
const { workerData } = require('node:worker_threads');
const pg = require(workerData.driver);
const { port, flag } = workerData;
const counter = new Int32Array(flag);
const clients = new Map();
const queues = new Map();

function int8(text) {
  const n = Number(text);
  if (!Number.isSafeInteger(n)) throw new RangeError('int8 value ' + text + ' is beyond 2^53: refused rather than rounded');
  return n;
}
function numeric(text) {
  const n = Number(text);
  if (/^-?\d+$/.test(text) && !Number.isSafeInteger(n)) throw new RangeError('numeric value ' + text + ' is beyond 2^53: refused rather than rounded');
  return n;
}
const asText = (text) => text;
const PARSERS = {
  20: int8,
  1700: numeric,
  16: (t) => (t === 't' ? 1 : 0),
  1082: asText,
  1114: asText,
  1184: asText,
};
const types = {
  getTypeParser(oid, format) {
    if (format !== 'binary' && PARSERS[oid] !== undefined) return PARSERS[oid];
    return pg.types.getTypeParser(oid, format);
  },
};

function reply(message) {
  port.postMessage(message);
  Atomics.add(counter, 0, 1);
  Atomics.notify(counter, 0);
}
function failure(id, err) {
  const e = err || {};
  return {
    id,
    ok: false,
    error: {
      message: String(e.message || e),
      code: e.code,
      detail: e.detail,
      constraint: e.constraint,
      table: e.table,
      column: e.column,
      schema: e.schema,
      severity: e.severity,
    },
  };
}
async function query(client, q) {
  const config = { text: q.text, values: q.values, types };
  if (q.name) config.name = q.name;
  if (q.rowMode) config.rowMode = q.rowMode;
  const r = await client.query(config);
  return { rows: r.rows, changes: r.rowCount == null ? 0 : r.rowCount };
}
// A value as a quoted literal: PostgreSQL types an untyped literal from its context as it types
// a parameter, so '5' fits a bigint column and a varchar one alike. undefined: not inlinable.
function literal(client, v) {
  if (v === null || v === undefined) return 'NULL';
  if (typeof v === 'string') return client.escapeLiteral(v);
  if (typeof v === 'number' && Number.isFinite(v)) return "'" + String(v) + "'";
  if (typeof v === 'boolean') return v ? "'true'" : "'false'";
  return undefined;
}
// The statement with its $n parameters replaced by literals (quoted text, identifiers and
// comments are copied as they are); undefined when a value cannot be inlined.
function inline(client, text, values) {
  let out = '';
  for (let i = 0; i < text.length; ) {
    const c = text[i];
    if (c === "'" || c === '"') {
      let j = i + 1;
      while (j < text.length && !(text[j] === c && text[j + 1] !== c)) j += text[j] === c ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j + 1;
    } else if ((c === '-' && text[i + 1] === '-') || (c === '/' && text[i + 1] === '*')) {
      // A comment is copied as it is: a $n in it is no parameter (and a value's newline must
      // not end it).
      const close = c === '-' ? '\n' : '*/';
      const at = text.indexOf(close, i + 2);
      const j = at < 0 ? text.length : at + close.length;
      out += text.slice(i, j);
      i = j;
    } else if (c === '$' && /[0-9]/.test(text[i + 1] || '')) {
      let j = i + 1;
      while (j < text.length && /[0-9]/.test(text[j])) j++;
      const lit = literal(client, values[Number(text.slice(i + 1, j)) - 1]);
      if (lit === undefined) return undefined;
      out += lit;
      i = j;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}
// What the connection had not sent, then \`tail\` (an exec's text), as few round trips as can be.
// Answers each \`before\` entry's result (rows and row count; null for transaction control), so a
// deferred statement's caller can read its count or its RETURNING rows after the round trip.
function resultsOf(r) {
  return Array.isArray(r) ? r : [r];
}
function outcome(r) {
  return { rows: r.rows || [], changes: r.rowCount == null ? 0 : r.rowCount };
}
async function runBefore(client, before, tail) {
  const parts = [];
  // For each part of \`parts\`, the index of its \`before\` entry (-1: control or the tail).
  const owners = [];
  const answers = (before || []).map(() => null);
  const flush = async () => {
    const r = resultsOf(await client.query({ text: parts.splice(0).join(';\n'), types }));
    const who = owners.splice(0);
    for (let k = 0; k < who.length && k < r.length; k++) {
      if (who[k] >= 0) answers[who[k]] = outcome(r[k]);
    }
  };
  for (let i = 0; i < (before || []).length; i++) {
    const b = before[i];
    if (typeof b === 'string') {
      parts.push(b);
      owners.push(-1);
      continue;
    }
    const text = inline(client, b.text, b.values);
    if (text !== undefined) {
      parts.push(text);
      owners.push(i);
      continue;
    }
    if (parts.length > 0) await flush();
    answers[i] = outcome(await client.query({ text: b.text, values: b.values, types }));
  }
  if (tail !== undefined) {
    parts.push(tail);
    owners.push(-1);
  }
  if (parts.length > 0) await flush();
  return answers;
}
// Connection id -> why it could not connect: its open is not waited for (see
// PgSyncConnection), so its next requests fail with that error.
const failedOpens = new Map();
async function handle(m) {
  if (m.op === 'open') {
    const client = new pg.Client({ connectionString: m.url, options: m.options });
    client.on('error', () => {});
    try {
      await client.connect();
    } catch (err) {
      failedOpens.set(m.cid, err);
      throw err;
    }
    clients.set(m.cid, client);
    return {};
  }
  const client = clients.get(m.cid);
  if (client === undefined) {
    const failed = failedOpens.get(m.cid);
    if (m.op === 'close') {
      failedOpens.delete(m.cid);
      return {};
    }
    throw failed || new Error('connection ' + m.cid + ' is not open');
  }
  switch (m.op) {
    case 'query': {
      const deferred = await runBefore(client, m.before);
      return Object.assign(await query(client, m), { deferred });
    }
    case 'exec':
      if (!m.atomic) return { deferred: await runBefore(client, m.before, m.text) };
      // A whole transaction (BEGIN ... COMMIT) sent at once: if any of it fails, it is rolled
      // back here, before the connection's next request runs (which would find it aborted).
      try {
        return { deferred: await runBefore(client, m.before, m.text) };
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {});
        throw err;
      }
    case 'batch': {
      const results = [];
      await client.query('BEGIN');
      try {
        for (const s of m.statements) results.push(await query(client, s));
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {});
        throw err;
      }
      return { results };
    }
    case 'close':
      clients.delete(m.cid);
      await client.end();
      return {};
    default:
      throw new Error('unknown op ' + m.op);
  }
}
port.on('message', (m) => {
  const prev = queues.get(m.cid) || Promise.resolve();
  const next = prev.then(() =>
    handle(m).then(
      (r) => reply(Object.assign({ id: m.id, ok: true }, r)),
      (err) => reply(failure(m.id, err)),
    ),
  );
  queues.set(m.cid, next);
  next.then(() => {
    if (queues.get(m.cid) === next) queues.delete(m.cid);
  });
});
`;
