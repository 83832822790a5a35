import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { READ_SCOPES, WRITE_SCOPES } from '../../src/common/api/scopes.js';
import { http, type Running } from '../support/harness.js';
import { testDatabaseIsPostgres } from '../support/test-database.js';
import {
  as,
  keyFor,
  limit,
  place,
  prng,
  startOrdersApp,
  TRADABLE,
  trader,
  type Trader,
} from '../support/orders.js';
import { responder } from '../support/rfq.js';
import {
  ajvFor,
  BodyGenerator,
  jsonClient,
  type ClientResponse,
  type Obj,
} from '../support/schema-fuzz.js';

/**
 * Issue 21: the served request schemas say what the server enforces. For every write operation
 * with a JSON body, bodies generated from the served /openapi.json: those valid against the schema
 * are never refused with 400 VALIDATION_FAILED (other answers, a 404 for an id that does not exist
 * or a 422 for a rule about the world, are fine), those breaking one rule are always refused with
 * it, and nothing answers 5xx. Seeded, so a failure replays.
 */
/**
 * Bodies of each kind per operation: 200 on SQLite (issue 21 asks for a few hundred). Affordable
 * because the suite's apps hash passwords at a low scrypt cost (PASSWORD_SCRYPT_COST,
 * test/support/harness.ts; register and login took most of the time at the production cost), the
 * bodies go through a lean keep-alive client (jsonClient) and the app logs warnings only.
 * The PostgreSQL + Redis pass sends 100 of each kind, generated from other seeds: the schemas are
 * judged by the same code on both engines, so what that pass adds is the storage of valid bodies
 * (text PostgreSQL refuses, numbers past a column's range: a 5xx there would be its own), and
 * `npm test` draws 300 bodies of each kind per operation (two seeds) over both passes, in less time
 * than 200 twice. A draw an operation was sent already is not sent again (the same body, judged by
 * the same rules): about a third of all draws, most of them for small schemas.
 * SCHEMA_FUZZ_BODIES=n for another count, SCHEMA_FUZZ_IN_FLIGHT for another concurrency.
 */
const ON_POSTGRES = testDatabaseIsPostgres();
const PER_OPERATION = Number(process.env.SCHEMA_FUZZ_BODIES ?? (ON_POSTGRES ? 100 : 200));
/** Each pass its own bodies: the PostgreSQL pass's seeds differ from SQLite's. */
const SEED_BASE = ON_POSTGRES ? 104_729 : 0;
const IN_FLIGHT = Number(process.env.SCHEMA_FUZZ_IN_FLIGHT ?? 8);

/**
 * Left out, and why: a scenario rules the key's later requests (forced rejections, delays,
 * disconnects of the operation it names), so sending hundreds would change what every other
 * operation answers; its rules (which operation, which codes it documents, which effect fields)
 * have their own suite (scenarios-rules).
 */
const EXCLUDED = new Set([
  'POST /api/v1/sandbox/scenarios',
  // Outside a world and without SANDBOX_CLOCK_CONTROL it is 404 for every body (so no body can
  // tell the route is there); with a world key, hundreds of valid advances would reach the
  // ten-year cap, after which a valid body is rightly 400. Its body rules: worlds-clock.
  'POST /api/v1/sandbox/clock',
]);

/**
 * Invalid bodies a contract answers with a code other than 400, by operation and broken rule:
 * CONTRACT.md "Watchlists" fixes more than 200 market_ids (the schema's maxItems) as 422
 * WATCHLIST_LIMIT_REACHED, the same answer as appending a 201st market to a list.
 */
const REFUSED_OTHERWISE: Record<string, { status: number; code: string }> = {
  'POST /api/v1/watchlists market_ids: too many items': {
    status: 422,
    code: 'WATCHLIST_LIMIT_REACHED',
  },
  'PATCH /api/v1/watchlists/{id} market_ids: too many items': {
    status: 422,
    code: 'WATCHLIST_LIMIT_REACHED',
  },
};

/** The one form of a VALIDATION_FAILED field message: "<field as sent> must ...". */
function inOneForm(f: { field: string; message: string }): boolean {
  return f.message.startsWith(`${f.field} must `);
}

interface Failure {
  op: string;
  kind: 'valid refused' | 'invalid taken' | '5xx';
  rule?: string;
  body: unknown;
  status: number;
  answer: string;
}

describe('schema fuzz: generated bodies against the served request schemas', () => {
  let svc: Running;
  let a: Trader;
  /** The seeded approved RFQ responder: quotes are judged on their body, not refused with 403. */
  let quoter: Trader;
  let doc: Obj;

  beforeAll(async () => {
    svc = await startOrdersApp({
      // Private targets: the generated webhook urls may name 127.0.0.1 or a name, judged by shape
      // only (no DNS at registration). A slow worker poll: the endpoints a PATCH points at random
      // hosts are not called during the run.
      // Warnings only: an info line per request costs the app CPU the test has better use for.
      env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_POLL_MS: '60000', LOG_LEVEL: 'warn' },
    });
    const base = await trader(svc);
    a = await keyFor(svc, base.email, base.token, {
      scopes: [...READ_SCOPES, ...WRITE_SCOPES],
    });
    doc = (await http(`${svc.api}/openapi.json`)).body as Obj;
  }, 120_000);
  afterAll(async () => {
    await svc.close();
  });

  /** Real ids for the path parameters, made through the API. */
  async function pathIds(): Promise<Record<string, string>> {
    const m = TRADABLE[0];
    const post = async (path: string, json: unknown, t: Pick<Trader, 'key'> = a) => {
      const res = await as(t, `${svc.api}${path}`, { method: 'POST', json });
      if (res.status >= 300) throw new Error(`${path}: ${res.status} ${res.text}`);
      return res.body as Obj;
    };
    const order = await place(svc, a, limit(m, 'BUY', 'YES', m.reference - 10, 1));
    const hook = await post('/webhooks', { url: 'https://127.0.0.1:9/hook', events: ['*'] });
    const comment = await post(`/markets/${m.id}/comments`, { body: 'fuzz target' });
    const list = await post('/watchlists', { name: 'fuzz' });
    const rfq = await post('/rfq', { market_id: m.id, quantity: 5 });
    quoter = await responder(svc);
    const quote = await post(`/rfq/${rfq.id}/quotes`, { bid: 40, ask: 60 }, quoter);
    const other = await keyFor(svc, a.email, a.token);
    const events = await as(a, `${svc.api}/sports/events?limit=1`);
    return {
      'markets/{id}': m.id,
      'orders/{id}': order.id,
      'webhooks/{id}': hook.id,
      'comments/{id}': comment.id,
      'watchlists/{id}': list.id,
      'rfq/{id}': rfq.id,
      'rfq/quotes/{id}': quote.id,
      'api-keys/{id}': other.keyId,
      'crypto/{symbol}': 'BTC-USD',
      'events/{id}': events.body.data[0].id as string,
    };
  }

  function fillPath(template: string, ids: Record<string, string>): string {
    let path = template;
    for (const [k, v] of Object.entries(ids)) path = path.replace(k, k.replace(/\{[^}]+\}/, v));
    if (path.includes('{')) throw new Error(`no id for ${template}`);
    return path;
  }

  /**
   * Rules about the world the schema cannot state, applied to valid bodies only: a data export's
   * window (end after start, at most 366 days) and an RFQ quote's ask above its bid. Bodies keep
   * their generated spelling otherwise.
   */
  function worldly(op: string, body: Obj, gen: BodyGenerator, rnd: () => number): void {
    if (op.startsWith('POST /api/v1/data/exports')) {
      const start = Date.UTC(2026, 0, 1) + Math.floor(rnd() * 300) * 86_400_000;
      body.start = new Date(start).toISOString();
      body.end = new Date(start + (1 + Math.floor(rnd() * 365)) * 86_400_000).toISOString();
      body.start = gen.dateTime(start, 0);
    }
    if (op === 'POST /api/v1/rfq/{id}/quotes' && body.bid !== undefined && body.ask !== undefined) {
      if (body.bid >= body.ask) body.ask = Math.min(99, body.bid + 1);
      if (body.bid >= body.ask) body.bid = body.ask - 1;
    }
  }

  it(`draws ${PER_OPERATION} valid and ${PER_OPERATION} invalid bodies for every write operation and sends each distinct one`, async () => {
    const started = Date.now();
    const ids = await pathIds();
    const components = (doc.components?.schemas ?? {}) as Record<string, Obj>;
    const ajv = ajvFor(components);
    const failures: Failure[] = [];
    const covered: string[] = [];
    let sent = 0;
    let drawn = 0;
    const spent = new Map<string, number>();
    const wordings: string[] = [];
    const jobs: (() => Promise<void>)[] = [];
    for (const [template, item] of Object.entries(doc.paths as Record<string, Obj>)) {
      for (const method of ['post', 'put', 'patch']) {
        const op = item[method] as Obj | undefined;
        const schema = op?.requestBody?.content?.['application/json']?.schema as Obj | undefined;
        const name = `${method.toUpperCase()} ${template}`;
        if (op === undefined || schema === undefined || EXCLUDED.has(name)) continue;
        covered.push(name);
        const rnd = prng(SEED_BASE + covered.length * 7919);
        const gen = new BodyGenerator(components, ajv, rnd);
        const url = `${svc.baseUrl}${fillPath(template, ids)}`;
        // Session-only operations and those that refuse test keys take the session token.
        const session = op['x-auth'] === 'session' || op['x-environment'] === 'real-money';
        const headers: Record<string, string> = session
          ? { authorization: `Bearer ${a.token}` }
          : op['x-auth'] === 'public'
            ? {}
            : { 'x-api-key': name === 'POST /api/v1/rfq/{id}/quotes' ? quoter.key : a.key };
        const send = async (body: unknown, expectValid: boolean, rule?: string) => {
          const t0 = Date.now();
          let res: ClientResponse;
          try {
            res = await client.send(url, method.toUpperCase(), headers, body);
          } catch (e) {
            failures.push({ op: name, kind: '5xx', rule, body, status: 0, answer: String(e) });
            return;
          }
          sent++;
          spent.set(name, (spent.get(name) ?? 0) + Date.now() - t0);
          const refused = res.status === 400 && res.body?.error?.code === 'VALIDATION_FAILED';
          const otherwise = REFUSED_OTHERWISE[`${name} ${rule}`];
          const refusedOtherwise =
            otherwise !== undefined &&
            res.status === otherwise.status &&
            res.body?.error?.code === otherwise.code;
          const failure = (kind: Failure['kind']) =>
            failures.push({ op: name, kind, rule, body, status: res.status, answer: res.text });
          if (res.status >= 500) failure('5xx');
          else if (expectValid && refused) failure('valid refused');
          else if (!expectValid && !refused && !refusedOtherwise) failure('invalid taken');
          // An endpoint registered is disabled at once, so the tier's endpoint cap (422) is never
          // reached and every valid body is judged in full (url shape and target included).
          if (name === 'POST /api/v1/webhooks' && res.status === 201) {
            await client.send(`${svc.api}/webhooks/${res.body!.id}`, 'DELETE', headers);
          }
          if (refused) {
            for (const f of res.body!.error.details.fields as {
              field: string;
              message: string;
            }[]) {
              if (!inOneForm(f)) wordings.push(`${name}: ${f.field}: ${f.message}`);
            }
          }
        };
        // A body already sent to this operation is judged by the same rules again: each distinct
        // body is sent once. Small schemas (a 6-digit code, an enum or two) repeat most of their
        // draws; about a third of the draws over all operations are repeats.
        const seen = { valid: new Set<string>(), invalid: new Set<string>() };
        const firstTime = (kind: keyof typeof seen, body: unknown): boolean => {
          const k = JSON.stringify(body);
          if (seen[kind].has(k)) return false;
          seen[kind].add(k);
          return true;
        };
        for (let i = 0; i < PER_OPERATION; i++) {
          let body = gen.valid(schema) as Obj;
          if (body !== null && typeof body === 'object') worldly(name, body, gen, rnd);
          if (!gen.check(schema, body)) {
            throw new Error(
              `${name}: generated a body its schema refuses: ${JSON.stringify(body)}`,
            );
          }
          const valid = body;
          if (firstTime('valid', valid)) jobs.push(() => send(valid, true));
          let broken = gen.invalid(schema, body);
          for (let t = 0; broken === null && t < 10; t++) {
            body = gen.valid(schema) as Obj;
            broken = gen.invalid(schema, body);
          }
          if (broken === null) throw new Error(`${name}: no rule to break`);
          const b = broken;
          if (firstTime('invalid', b.body)) jobs.push(() => send(b.body, false, b.rule));
        }
        drawn += 2 * PER_OPERATION;
      }
    }
    console.log(
      `generated ${drawn} bodies, ${jobs.length} distinct, in ${(Date.now() - started) / 1000} s`,
    );
    const client = jsonClient(IN_FLIGHT);
    let next = 0;
    try {
      await Promise.all(
        Array.from({ length: IN_FLIGHT }, async () => {
          while (next < jobs.length) await jobs[next++]();
        }),
      );
    } finally {
      client.close();
    }
    const seconds = (Date.now() - started) / 1000;
    console.log(
      `schema fuzz: ${covered.length} operations, ${sent} bodies in ${seconds.toFixed(1)} s`,
    );
    console.log(
      [...spent].sort((x, y) => y[1] - x[1]).slice(0, 8),
      Object.entries(
        failures.reduce<Record<string, number>>((acc, f) => {
          const k = `${f.op} ${f.kind} ${f.status}`;
          acc[k] = (acc[k] ?? 0) + 1;
          return acc;
        }, {}),
      ),
    );
    const shown = failures.slice(0, 30).map((f) => ({ ...f, answer: f.answer.slice(0, 300) }));
    expect({ count: failures.length, shown }).toEqual({ count: 0, shown: [] });
    // Every field message of those refusals is worded one way (issue 21).
    expect(wordings.slice(0, 20)).toEqual([]);
    expect(covered.length).toBeGreaterThanOrEqual(34);
    expect(drawn).toBe(covered.length * PER_OPERATION * 2);
    expect(sent).toBe(jobs.length);
  }, 600_000);

  it('every VALIDATION_FAILED field message reads "<field> must ...": queries, headers, bodies, nested and per-leg fields', async () => {
    const m = TRADABLE[1];
    const key = { 'x-api-key': a.key };
    const session = { authorization: `Bearer ${a.token}` };
    const cases: [string, string, Record<string, string>, unknown?][] = [
      ['GET', '/orders?limit=abc', key],
      ['GET', '/orders?limit=0', key],
      ['GET', '/orders?limit=', key],
      ['GET', '/orders?status=NOPE', key],
      ['GET', '/orders?market_id=x', key],
      ['GET', '/orders?cursor=zzz', key],
      ['GET', '/orders?zzz=1', key],
      ['GET', '/orders?limit=1&limit=2', key],
      ['GET', '/orders/export?created_from=yesterday', key],
      ['GET', '/markets?limit=500', key],
      ['POST', '/auth/register', {}, { email: 'nope', password: 'short', extra: 1 }],
      ['POST', '/orders', key, { price: '10', type: 'STOP', colour: 'red' }],
      ['POST', '/orders', key, { ...limit(m, 'BUY', 'YES', 40, 1), price: undefined }],
      [
        'POST',
        '/orders',
        key,
        { ...limit(m, 'BUY', 'YES', 40, 1), post_only: true, time_in_force: 'IOC' },
      ],
      [
        'POST',
        '/orders',
        key,
        { market_id: m.id, action: 'BUY', side: 'YES', type: 'MARKET', quantity: 1, price: 5 },
      ],
      ['POST', '/orders/cancel-batch', key, { order_ids: ['a', 'a'] }],
      ['POST', '/webhooks', key, { url: 'ftp://x', events: [] }],
      ['POST', '/webhooks', key, { url: 'https://x.test/h', events: ['*', '*'] }],
      ['POST', '/webhooks', key, { url: ' https://x.test/h', events: ['nope'] }],
      ['POST', '/watchlists', key, { name: '', market_ids: ['bad'] }],
      ['PATCH', '/users/me', session, { username: 'AB', bio: 5 }],
      ['POST', '/sandbox/scenarios', key, { match: { operation: 5 }, effect: { type: 'X' } }],
      ['POST', '/data/exports', key, { dataset: 'TRADES', start: 'x', end: 'y' }],
      ['POST', '/data/exports', key, { dataset: 'TRADES', start: '2026-01-01', end: '2025-01-01' }],
      ['POST', `/markets/${m.id}/comments`, key, { body: '\u0000' }],
      ['POST', '/api-keys', session, { name: 'x', scopes: ['nope'], environment: 'moon' }],
      ['POST', '/security/mfa/step-up', key, { code: '12345' }],
      ['POST', '/wallet/deposits', session, { amount_cents: 0 }],
      ['POST', '/sandbox/wallet/fund', key, { amount_cents: -1 }],
      ['DELETE', `/orders/ord_00000000000000000000`, key, { a: 1 }],
    ];
    const messages: string[] = [];
    for (const [method, path, headers, json] of cases) {
      const res = await http(`${svc.api}${path}`, { method, headers, json });
      const err = res.body?.error;
      expect({ path, status: res.status, code: err?.code }).toEqual({
        path,
        status: 400,
        code: 'VALIDATION_FAILED',
      });
      for (const f of err.details.fields as { field: string; message: string }[]) {
        messages.push(`${f.field} | ${f.message}`);
        expect({ path, ...f, form: inOneForm(f) }).toEqual({ path, ...f, form: true });
      }
      if (err.details.fields.length === 1) {
        expect(err.message).toBe(`Invalid request: ${err.details.fields[0].message}`);
      }
    }
    // A batch leg's fields are worded as POST /orders words them.
    const legs = await http(`${svc.api}/orders/batch`, {
      method: 'POST',
      headers: key,
      json: { orders: [{ quantity: 0 }, { ...limit(m, 'BUY', 'YES', 40, 1), price: undefined }] },
    });
    for (const r of legs.body.results) {
      for (const f of r.error.details.fields) {
        messages.push(`${f.field} | ${f.message}`);
        expect({ ...f, form: inOneForm(f) }).toEqual({ ...f, form: true });
      }
    }
    expect(messages.length).toBeGreaterThan(40);
  });
});
