import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { asSession, login, UNVERIFIED } from '../support/access.js';
import { expectContractError, http, type Running } from '../support/harness.js';
import { creator, createMarket, created, LATER, marketBody } from '../support/markets-create.js';
import {
  as,
  expectValidation,
  limit,
  paperQuery,
  place,
  startOrdersApp,
  type Trader,
} from '../support/orders.js';
import { SEED_EVENTS } from '../support/sports.js';
import { WsClient } from '../support/ws.js';
import type { ManualClock } from '../../src/common/clock/clock.js';

/**
 * POST /markets: who may create where (the CREATOR role live, any verified user on paper, 20
 * open paper markets each even under parallel creates), the body's rules, slugs per world,
 * isolation of the worlds, and a created paper market quoted and traded like a seeded one.
 */
describe('markets: creating', () => {
  let svc: Running;
  let seeded: { paper: Trader; live: Trader };
  let other: { paper: Trader; live: Trader };

  beforeAll(async () => {
    svc = await startOrdersApp({ env: { CREATOR_EMAILS: 'granted@example.test' } });
    seeded = await creator(svc);
    other = await creator(svc, 'plain@example.test');
  });
  afterAll(() => svc.close());

  it('live: the seeded trader (CREATOR) creates; another verified user is refused', async () => {
    const res = await createMarket(svc, seeded.live, marketBody('live-one'));
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      id: expect.stringMatching(/^mkt_[a-z0-9]{22}$/),
      slug: 'live-one',
      title: 'Market live-one',
      description: '',
      category: 'CULTURE',
      status: 'OPEN',
      outcome: null,
      close_time: LATER,
      environment: 'live',
      best_bid: null, // no house in the live world
      best_ask: null,
    });
    const stored = await http(`${svc.api}/markets/${res.body.id}`);
    expect(stored.status).toBe(200);
    const refused = await createMarket(svc, other.live, marketBody('live-two'));
    expectContractError(refused, 403, 'CREATOR_ROLE_REQUIRED');
  });

  it('live: CREATOR_EMAILS grants the role to a verified account', async () => {
    const granted = await creator(svc, 'granted@example.test');
    const res = await createMarket(svc, granted.live, marketBody('granted-live'));
    expect(res.status).toBe(201);
    expect(res.body.environment).toBe('live');
  });

  it('paper: any verified user creates; an unverified session is told EMAIL_NOT_VERIFIED', async () => {
    const res = await createMarket(svc, other.paper, marketBody('plain-paper'));
    expect(res.status).toBe(201);
    expect(res.body.environment).toBe('test');
    const token = await login(svc, UNVERIFIED);
    const unverified = await asSession(token, `${svc.api}/markets`, {
      method: 'POST',
      json: marketBody('unverified-one'),
    });
    expectContractError(unverified, 403, 'EMAIL_NOT_VERIFIED');
    expect(paperQuery(svc, `SELECT 1 FROM markets WHERE slug = 'unverified-one'`)).toEqual([]);
  });

  it('refuses bad slugs and fields with 400 naming the field', async () => {
    for (const slug of ['ab', 'Upper-Case', 'under_score', 'a'.repeat(81), 'sp ace']) {
      expectValidation(await createMarket(svc, other.paper, marketBody(slug)), 'slug');
    }
    const bad: [Record<string, unknown>, string][] = [
      [{ category: 'SPACE' }, 'category'],
      [{ close_time: 'tomorrow' }, 'close_time'],
      [{ reference_price: 0 }, 'reference_price'],
      [{ reference_price: 100 }, 'reference_price'],
      [{ index: 'DOGE-USD', category: 'CRYPTO', strike: '1.00' }, 'index'],
      [{ strike: '-5', category: 'CRYPTO', index: 'BTC-USD' }, 'strike'],
      [{ title: '' }, 'title'],
    ];
    for (const [extra, field] of bad) {
      expectValidation(await createMarket(svc, other.paper, marketBody('bad-field', extra)), field);
    }
    expect(paperQuery(svc, `SELECT 1 FROM markets WHERE slug = 'bad-field'`)).toEqual([]);
  });

  it('refuses a past close_time, a strike off a crypto market and an unknown event (422/404)', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ close_time: '2026-11-22T11:59:59Z' }, 'close_time'],
      [{ close_time: '2026-11-22T12:00:00Z' }, 'close_time'], // now is not the future
      [{ strike: '100000.00' }, 'strike'],
      [{ category: 'CRYPTO', strike: '100000.00' }, 'strike'], // no index
      [{ index: 'BTC-USD', strike: '100000.00' }, 'strike'], // CULTURE
      [{ category: 'CRYPTO', index: 'BTC-USD', strike: '0' }, 'strike'],
    ];
    for (const [extra, field] of cases) {
      const err = expectContractError(
        await createMarket(svc, other.paper, marketBody('ruled-out', extra)),
        422,
        'MARKET_RULE_VIOLATED',
      );
      expect(err.details.field).toBe(field);
    }
    const live = await createMarket(
      svc,
      seeded.live,
      marketBody('ruled-out', { reference_price: 40 }),
    );
    expect(expectContractError(live, 422, 'MARKET_RULE_VIOLATED').details.field).toBe(
      'reference_price',
    );
    const ev = 'spe_doesnotexist';
    const unknown = await createMarket(svc, other.paper, marketBody('ruled-out', { event_id: ev }));
    expect(expectContractError(unknown, 404, 'NOT_FOUND').details).toEqual({ event_id: ev });
    expect(paperQuery(svc, `SELECT 1 FROM markets WHERE slug = 'ruled-out'`)).toEqual([]);
  });

  it('a crypto market with index and strike shows them', async () => {
    const m = await created(
      svc,
      other.paper,
      marketBody('btc-above-150k', { category: 'CRYPTO', index: 'BTC-USD', strike: '150000' }),
    );
    expect(m).toMatchObject({ index: 'BTC-USD', strike: '150000.00', category: 'CRYPTO' });
  });

  it('slugs are unique per world (409 SLUG_TAKEN), seeded ones included; the other world may reuse one', async () => {
    await created(svc, other.paper, marketBody('shared-slug'));
    const again = await createMarket(svc, seeded.paper, marketBody('shared-slug'));
    expect(expectContractError(again, 409, 'SLUG_TAKEN').details).toEqual({ slug: 'shared-slug' });
    const seededSlug = paperQuery<{ slug: string }>(svc, 'SELECT slug FROM markets LIMIT 1')[0]
      .slug;
    expectContractError(
      await createMarket(svc, other.paper, marketBody(seededSlug)),
      409,
      'SLUG_TAKEN',
    );
    const live = await createMarket(svc, seeded.live, marketBody('shared-slug'));
    expect(live.status).toBe(201);
  });

  it("the worlds do not see each other's created markets", async () => {
    const paper = await created(svc, other.paper, marketBody('paper-only'));
    const live = await created(svc, seeded.live, marketBody('live-only'));
    expectContractError(await http(`${svc.api}/markets/${paper.id}`), 404, 'NOT_FOUND');
    expectContractError(await as(seeded.live, `${svc.api}/markets/${paper.id}`), 404, 'NOT_FOUND');
    expectContractError(await as(other.paper, `${svc.api}/markets/${live.id}`), 404, 'NOT_FOUND');
    const slugsOf = async (t?: Trader) => {
      const url = `${svc.api}/markets?limit=100&category=CULTURE`;
      const res = t === undefined ? await http(url) : await as(t, url);
      return (res.body.data as { slug: string }[]).map((m) => m.slug);
    };
    expect(await slugsOf()).toContain('live-only');
    expect(await slugsOf()).not.toContain('paper-only');
    expect(await slugsOf(other.paper)).toContain('paper-only');
    expect(await slugsOf(other.paper)).not.toContain('live-only');
  });

  it('the house quotes a new paper market at once at reference_price; orders trade against it; realtime works', async () => {
    const m = await created(
      svc,
      other.paper,
      marketBody('quoted-at-once', { reference_price: 30 }),
    );
    expect(m).toMatchObject({ best_bid: 29, best_ask: 31 });
    const levels = (await as(other.paper, `${svc.api}/markets/${m.id}/orderbook`)).body;
    expect(levels.bids).toHaveLength(5);
    expect(levels.bids[0]).toEqual({ price: 29, quantity: 100 });
    expect(levels.asks[0]).toEqual({ price: 31, quantity: 100 });

    const ws = await WsClient.authed(svc.baseUrl, { api_key: other.paper.key });
    expect((await ws.subscribe([`orderbook:${m.id}`, `trades:${m.id}`])).type).toBe('subscribed');
    const snap = await ws.waitFor((x) => x.type === 'event' && x.channel === `orderbook:${m.id}`);
    expect(snap.data.kind).toBe('snapshot');
    const from = ws.mark();
    const o = await place(svc, other.paper, limit({ id: m.id }, 'BUY', 'YES', 31, 4));
    expect(o).toMatchObject({ status: 'FILLED', average_fill_price: 31 });
    const trade = await ws.waitFor(
      (x) => x.type === 'event' && x.channel === `trades:${m.id}`,
      3000,
      from,
    );
    expect(trade.data).toMatchObject({ market_id: m.id, price: 31, quantity: 4 });
    await ws.close();
    const trades = await as(other.paper, `${svc.api}/markets/${m.id}/trades`);
    expect(trades.body.data[0]).toMatchObject({ price: 31, quantity: 4, taker_side: 'YES' });
    expect((await as(other.paper, `${svc.api}/markets/${m.id}`)).body).toMatchObject({
      last_price: 31,
      volume: 4,
    });
  });

  it('paper: at most 20 open markets per user (422 MARKET_LIMIT_REACHED); parallel creates: exactly 20 win', async () => {
    const one = await creator(svc, 'serial@example.test');
    for (let i = 0; i < 20; i++) await created(svc, one.paper, marketBody(`serial-${i}`));
    const over = await createMarket(svc, one.paper, marketBody('serial-20'));
    expect(expectContractError(over, 422, 'MARKET_LIMIT_REACHED').details).toEqual({ limit: 20 });
    // The live world has no such cap, and the cap is per user.
    expect((await createMarket(svc, other.paper, marketBody('serial-20'))).status).toBe(201);

    const many = await creator(svc, 'parallel@example.test');
    const answers = await Promise.all(
      Array.from({ length: 26 }, (_, i) => createMarket(svc, many.paper, marketBody(`par-${i}`))),
    );
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(20);
    expect(statuses.filter((s) => s === 422)).toHaveLength(6);
    const stored = paperQuery<{ n: number }>(
      svc,
      `SELECT COUNT(*) AS n FROM markets WHERE creator_id = ?`,
      many.paper.userId,
    );
    expect(stored[0].n).toBe(20);
  });
  it('links a sports event of its world; a created crypto market resolves itself at close_time', async () => {
    const ev = SEED_EVENTS[0].id;
    const linked = await created(svc, other.paper, marketBody('linked-event', { event_id: ev }));
    expect(linked.event_id).toBe(ev);

    const m = await created(
      svc,
      other.paper,
      marketBody('btc-above-1k-soon', {
        category: 'CRYPTO',
        index: 'BTC-USD',
        strike: '1000.00',
        close_time: '2026-11-22T12:30:00Z',
      }),
    );
    const clock = svc.clock as ManualClock;
    clock.advance(Date.parse('2026-11-22T12:30:00Z') - clock.now());
    const deadline = Date.now() + 5000;
    while (
      paperQuery<{ status: string }>(svc, 'SELECT status FROM markets WHERE id = ?', m.id)[0]
        .status !== 'RESOLVED'
    ) {
      if (Date.now() > deadline) throw new Error('not resolved at close_time');
      await new Promise((r) => setTimeout(r, 100));
    }
    // BTC-USD starts at 95000.00: strictly above the strike.
    expect((await as(other.paper, `${svc.api}/markets/${m.id}`)).body).toMatchObject({
      status: 'RESOLVED',
      outcome: 'YES',
    });
  });
});
