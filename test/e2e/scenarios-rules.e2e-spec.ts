import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { expectContractError, http, type Running } from '../support/harness.js';
import {
  as,
  expectValidation,
  keyFor,
  limit,
  ORDER_SCOPES,
  placeRaw,
  startOrdersApp,
  TRADABLE,
  trader,
  type Trader,
} from '../support/orders.js';
import { allScenarios, scenario, scenarioById, scenarioRaw } from '../support/scenarios.js';
import { openWorld } from '../support/worlds-groups.js';

const SCOPES = [...ORDER_SCOPES, 'wallet:write'];
const REJECT_WALLET = {
  match: { operation: 'GET /wallet' },
  effect: { type: 'REJECT', code: 'SERVICE_UNAVAILABLE' },
};

/** Who and what a scenario shapes, how often, how long it lives, and what it refuses. */
describe('sandbox scenarios: matching, worlds, lifetime and bad input', () => {
  let svc: Running;
  let a: Trader;
  let b: Trader;
  const [m, other] = [TRADABLE[0], TRADABLE[1]];
  const wallet = (t: Pick<Trader, 'key'>) => as(t, `${svc.api}/wallet`);
  const clear = async (t: Trader) => {
    for (const s of await allScenarios(svc, t)) {
      await as(t, `${svc.api}/sandbox/scenarios/${s.id}`, { method: 'DELETE' });
    }
  };

  beforeAll(async () => {
    svc = await startOrdersApp();
    a = await trader(svc, 'a@scenarios-rules.test', { scopes: SCOPES });
    b = await trader(svc, 'b@scenarios-rules.test', { scopes: SCOPES });
  });
  let closed = false;
  afterAll(async () => {
    if (!closed) await svc.close();
  });

  it('refuses bad input with 400 naming the field, and creates nothing', async () => {
    const cases: [unknown, string][] = [
      [
        { match: { operation: 'POST /nothing' }, effect: { type: 'DISCONNECT' } },
        'match.operation',
      ],
      [{ match: { operation: 'post /orders' }, effect: { type: 'DISCONNECT' } }, 'match.operation'],
      [
        { match: { operation: 'DELETE /sandbox/scenarios/{id}' }, effect: { type: 'DISCONNECT' } },
        'match.operation',
      ],
      [
        {
          match: { operation: 'POST /orders' },
          effect: { type: 'REJECT', code: 'WATCHLIST_NAME_TAKEN' },
        },
        'effect.code',
      ],
      [
        {
          match: { operation: 'GET /wallet' },
          effect: { type: 'REJECT', code: 'INSUFFICIENT_FUNDS' },
        },
        'effect.code',
      ],
      [{ match: { operation: 'POST /orders' }, effect: { type: 'REJECT' } }, 'effect.code'],
      [{ ...REJECT_WALLET, times: 0 }, 'times'],
      [{ ...REJECT_WALLET, times: 1001 }, 'times'],
      [{ ...REJECT_WALLET, times: 1.5 }, 'times'],
      [{ match: { operation: 'GET /wallet' }, effect: { type: 'DELAY', ms: 0 } }, 'effect.ms'],
      [{ match: { operation: 'GET /wallet' }, effect: { type: 'DELAY', ms: 10_001 } }, 'effect.ms'],
      [{ match: { operation: 'GET /wallet' }, effect: { type: 'EXPLODE' } }, 'effect.type'],
      [
        { match: { operation: 'GET /wallet' }, effect: { type: 'PARTIAL_FILL', quantity: 5 } },
        'effect.type',
      ],
      [
        { match: { operation: 'POST /orders' }, effect: { type: 'PARTIAL_FILL', quantity: 0 } },
        'effect.quantity',
      ],
      [
        { match: { operation: 'GET /wallet' }, effect: { type: 'RATE_LIMIT' } },
        'effect.retry_after_seconds',
      ],
      [
        {
          match: { operation: 'GET /wallet' },
          effect: { type: 'RATE_LIMIT', retry_after_seconds: 3601 },
        },
        'effect.retry_after_seconds',
      ],
      [{ ...REJECT_WALLET, colour: 'red' }, 'colour'],
      [
        { match: { operation: 'GET /wallet', world: 'x' }, effect: { type: 'DISCONNECT' } },
        'match.world',
      ],
      [{ match: { operation: 'GET /wallet' }, effect: { type: 'DISCONNECT', ms: 5 } }, 'effect.ms'],
      [
        {
          match: { operation: 'POST /orders', client_order_id_prefix: 'no spaces' },
          effect: { type: 'DISCONNECT' },
        },
        'match.client_order_id_prefix',
      ],
      [{ effect: { type: 'DISCONNECT' } }, 'match'],
      [{ match: { operation: 'GET /wallet' } }, 'effect'],
    ];
    for (const [body, field] of cases) {
      expectValidation(await scenarioRaw(svc, a, body), field);
    }
    expectContractError(
      await scenarioRaw(svc, a, {
        match: { operation: 'POST /orders', market_id: 'mkt_00000000000000000000' },
        effect: { type: 'DISCONNECT' },
      }),
      404,
      'NOT_FOUND',
    );
    expect(await allScenarios(svc, a)).toEqual([]);
  });

  it("refuses the same bad input with a world key, and changes neither that world's scenarios nor the paper world's", async () => {
    const w = await openWorld(svc, a);
    const kept = await scenario(svc, w, { ...REJECT_WALLET, times: 3 });
    const cases: [unknown, string][] = [
      [
        { match: { operation: 'POST /nothing' }, effect: { type: 'DISCONNECT' } },
        'match.operation',
      ],
      [
        {
          match: { operation: 'GET /wallet' },
          effect: { type: 'REJECT', code: 'INSUFFICIENT_FUNDS' },
        },
        'effect.code',
      ],
      [{ ...REJECT_WALLET, times: 0 }, 'times'],
      [{ ...REJECT_WALLET, times: 1001 }, 'times'],
    ];
    for (const [body, field] of cases) {
      expectValidation(await scenarioRaw(svc, w, body), field);
    }
    expect((await allScenarios(svc, w)).map((s) => s.id)).toEqual([kept.id]);
    expect((await scenarioById(svc, w, kept.id)).remaining).toBe(3);
    expect(await allScenarios(svc, a)).toEqual([]);
    // Nothing fired meanwhile: the world's wallet answers as the kept scenario says, the paper one as usual.
    expect((await wallet(w)).status).toBe(503);
    expect((await scenarioById(svc, w, kept.id)).remaining).toBe(2);
    expect((await wallet(a)).status).toBe(200);
  });

  it('refuses live keys and sessions (403 LIVE_KEY_SANDBOX_ENDPOINT), and never shapes the live world', async () => {
    const live = await keyFor(svc, a.email, a.token, { environment: 'live', scopes: SCOPES });
    expectContractError(
      await scenarioRaw(svc, live, REJECT_WALLET),
      403,
      'LIVE_KEY_SANDBOX_ENDPOINT',
    );
    expectContractError(
      await http(`${svc.api}/sandbox/scenarios`, {
        headers: { authorization: `Bearer ${a.token}` },
      }),
      403,
      'LIVE_KEY_SANDBOX_ENDPOINT',
    );
    const s = await scenario(svc, a, { ...REJECT_WALLET, times: 5 });
    // The live key's identical request is untouched, and spends nothing.
    const liveAnswer = await wallet(live);
    expect(liveAnswer.status).toBe(200);
    expect(liveAnswer.body.environment).toBe('live');
    expect(liveAnswer.headers.get('svc-scenario')).toBeNull();
    const session = await http(`${svc.api}/wallet`, {
      headers: { authorization: `Bearer ${a.token}` },
    });
    expect([session.status, session.headers.get('svc-scenario')]).toEqual([200, null]);
    expect((await scenarioById(svc, a, s.id)).remaining).toBe(5);
    // Every test key of the same user is shaped (the user's paper world) ...
    const second = await keyFor(svc, a.email, a.token, { scopes: SCOPES });
    expectContractError(await wallet(second), 503, 'SERVICE_UNAVAILABLE');
    // ... another user's never, and another user cannot see or delete it.
    expect((await wallet(b)).status).toBe(200);
    expectContractError(await as(b, `${svc.api}/sandbox/scenarios/${s.id}`), 404, 'NOT_FOUND');
    expectContractError(
      await as(b, `${svc.api}/sandbox/scenarios/${s.id}`, { method: 'DELETE' }),
      404,
      'NOT_FOUND',
    );
    expect((await scenarioById(svc, a, s.id)).remaining).toBe(4);
    await clear(a);
  });

  it('matches by market (body or path) and by client_order_id prefix; other requests are untouched', async () => {
    const byMarket = await scenario(svc, a, {
      match: { operation: 'POST /orders', market_id: m.id },
      effect: { type: 'REJECT', code: 'MARKET_NOT_OPEN' },
    });
    const elsewhere = await placeRaw(svc, a, limit(other, 'BUY', 'YES', 5, 1));
    expect([elsewhere.status, elsewhere.headers.get('svc-scenario')]).toEqual([201, null]);
    const here = await placeRaw(svc, a, limit(m, 'BUY', 'YES', 5, 1));
    expectContractError(here, 422, 'MARKET_NOT_OPEN');
    expect(here.headers.get('svc-scenario')).toBe(byMarket.id);

    const byPath = await scenario(svc, a, {
      match: { operation: 'GET /markets/{id}', market_id: m.id },
      effect: { type: 'REJECT', code: 'NOT_FOUND' },
    });
    expect((await as(a, `${svc.api}/markets/${other.id}`)).status).toBe(200);
    const pathHit = await as(a, `${svc.api}/markets/${m.id}`);
    expectContractError(pathHit, 404, 'NOT_FOUND');
    expect(pathHit.headers.get('svc-scenario')).toBe(byPath.id);

    const byPrefix = await scenario(svc, a, {
      match: { operation: 'POST /orders', client_order_id_prefix: 'ci-' },
      effect: { type: 'REJECT', code: 'INSUFFICIENT_FUNDS' },
    });
    for (const extra of [{}, { client_order_id: 'other-ci-1' }]) {
      const res = await placeRaw(svc, a, limit(m, 'BUY', 'YES', 5, 1, extra));
      expect([res.status, res.headers.get('svc-scenario')]).toEqual([201, null]);
    }
    const prefixed = await placeRaw(
      svc,
      a,
      limit(m, 'BUY', 'YES', 5, 1, { client_order_id: 'ci-7' }),
    );
    expectContractError(prefixed, 422, 'INSUFFICIENT_FUNDS');
    expect(prefixed.headers.get('svc-scenario')).toBe(byPrefix.id);
    await as(a, `${svc.api}/orders/cancel-all`, { method: 'POST' });
    await clear(a);
  });

  it('fires the oldest matching scenario first, each its own number of times', async () => {
    const first = await scenario(svc, a, {
      match: { operation: 'GET /wallet' },
      effect: { type: 'REJECT', code: 'INTERNAL' },
    });
    const second = await scenario(svc, a, { ...REJECT_WALLET, times: 2 });
    const seen: [number, string | null][] = [];
    for (let i = 0; i < 4; i++) {
      const res = await wallet(a);
      seen.push([res.status, res.headers.get('svc-scenario')]);
    }
    expect(seen).toEqual([
      [500, first.id],
      [503, second.id],
      [503, second.id],
      [200, null],
    ]);
    // Spent scenarios stay listed with remaining 0.
    expect((await scenarioById(svc, a, second.id)).remaining).toBe(0);
    await clear(a);
  });

  it('never fires more than times under parallel requests', async () => {
    const s = await scenario(svc, a, { ...REJECT_WALLET, times: 3 });
    const answers = await Promise.all(Array.from({ length: 24 }, () => wallet(a)));
    const shaped = answers.filter((r) => r.headers.get('svc-scenario') === s.id);
    expect(shaped.map((r) => r.status)).toEqual([503, 503, 503]);
    expect(answers.filter((r) => r.status === 200)).toHaveLength(21);
    expect((await scenarioById(svc, a, s.id)).remaining).toBe(0);
    await clear(a);
  });

  it('lists with the keyset cursor, oldest first; unknown ids are 404', async () => {
    const made = [];
    for (let i = 0; i < 3; i++) made.push((await scenario(svc, a, REJECT_WALLET)).id);
    expect((await allScenarios(svc, a)).map((s) => s.id)).toEqual(made);
    expectContractError(await as(a, `${svc.api}/sandbox/scenarios/scn_nope`), 404, 'NOT_FOUND');
    expectContractError(await as(a, `${svc.api}/sandbox/scenarios/not-an-id`), 404, 'NOT_FOUND');
    await clear(a);
  });

  it("a sandbox reset clears the user's scenarios only", async () => {
    await scenario(svc, a, REJECT_WALLET);
    await scenario(svc, a, REJECT_WALLET);
    const kept = await scenario(svc, b, { ...REJECT_WALLET, times: 1 });
    const res = await as(a, `${svc.api}/sandbox/reset`, { method: 'POST' });
    expect(res.status).toBe(200);
    expect(res.body.cleared.scenarios).toBe(2);
    expect(await allScenarios(svc, a)).toEqual([]);
    expect((await wallet(a)).status).toBe(200);
    expect((await allScenarios(svc, b)).map((s) => s.id)).toEqual([kept.id]);
    await clear(b);
  });

  it('survives a restart, with what it has left', async () => {
    const s = await scenario(svc, a, { ...REJECT_WALLET, times: 2 });
    expect((await wallet(a)).status).toBe(503);
    await svc.close({ keepData: true });
    svc = await startOrdersApp({ dataDir: svc.dataDir });
    expect((await scenarioById(svc, a, s.id)).remaining).toBe(1);
    const res = await wallet(a);
    expectContractError(res, 503, 'SERVICE_UNAVAILABLE');
    expect(res.headers.get('svc-scenario')).toBe(s.id);
    expect((await wallet(a)).status).toBe(200);
  });

  it('a shutdown cuts a pending DELAY short with 503 instead of waiting it out', async () => {
    const s = await scenario(svc, a, {
      match: { operation: 'GET /wallet' },
      effect: { type: 'DELAY', ms: 10_000 },
    });
    const pending = wallet(a);
    // The request is waiting once it has spent the scenario.
    for (let i = 0; i < 100 && (await scenarioById(svc, a, s.id)).remaining > 0; i++) {
      await new Promise((r) => setTimeout(r, 20));
    }
    const t0 = Date.now();
    closed = true;
    await svc.close();
    expect(Date.now() - t0).toBeLessThan(5_000);
    const res = await pending;
    expectContractError(res, 503, 'SERVICE_UNAVAILABLE');
    expect(res.headers.get('svc-scenario')).toBe(s.id);
  });
});
