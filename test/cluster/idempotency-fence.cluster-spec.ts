import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import type { JsonResponse } from '../support/harness.js';
import type { ServiceProcess } from '../support/process.js';
import {
  clusterClient,
  enterpriseTrader,
  openMarket,
  startCluster,
  waitWriter,
  type Cluster,
  type ClusterClient,
} from './cluster-fixture.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

/**
 * Issue 24's hole in Idempotency-Key claims, driven for real on two instances: an instance (A)
 * that claimed a key and forwarded its order to the writer (W) is cut off from PostgreSQL (its
 * two `svc-idempotency*` sessions terminated while it cannot take them back) and looks stopped;
 * its claim is settled as a peer settles a gone instance's claim with no effect yet (released),
 * and the client's retry runs while A's order is still on its way to the writer. The writer
 * fences the key: of the two commands under it, the second changes nothing and is answered 409
 * IDEMPOTENT_REQUEST_APPLIED naming the first's order. One order, never two.
 *
 * W is stopped (SIGSTOP) from before A's request until the claim is settled, so A's command
 * cannot run before it; A is stopped while its sessions are terminated, so it cannot take its
 * locks back. Both are stopped for well under the forwarding deadline (3 s) and the writer's
 * presence (3 s).
 */
describe('cluster: an Idempotency-Key settled while its command is on the way takes effect once', () => {
  let cluster: Cluster;
  let writer: ServiceProcess;
  let a: ServiceProcess;
  let client: ClusterClient;

  beforeAll(async () => {
    cluster = await startCluster(2, { env: { SANDBOX_FEED_INTERVAL_MS: '0' } });
    writer = await waitWriter(cluster.services.admin, cluster.instances);
    a = cluster.instances.find((i) => i !== writer)!;
    const t = await enterpriseTrader(a);
    const market = await openMarket(a, t);
    client = clusterClient(t, market, 9, 20_000);
    // A forwards to the writer (the path the case stops halfway).
    expect((await client.place(a)).status).toBe(201);
  }, 420_000);

  afterAll(async () => {
    for (const svc of cluster?.instances ?? []) svc.proc.kill('SIGCONT');
    await cluster?.stop();
  }, 60_000);

  const query = async <T>(sql: string, params: unknown[]): Promise<T[]> =>
    (await cluster.services.admin.query(sql, params)).rows as T[];

  it("A's command and the retry both reach the writer: the second is refused, one order", async () => {
    const key = randomUUID();
    const orderIds = async (): Promise<string[]> => {
      const listed = await client.get(writer, '/orders?limit=200');
      expect(listed.status).toBe(200);
      return (listed.body.data as { id: string }[]).map((o) => o.id);
    };
    const before = new Set(await orderIds());
    let viaA: Promise<JsonResponse> | undefined;
    writer.proc.kill('SIGSTOP');
    try {
      viaA = client.place(a, { key });
      // A's claim of the key (it forwards the order right after, to a writer that is stopped).
      let claim: { claimed_by: string; claim_id: string } | undefined;
      for (let i = 0; i < 200 && claim === undefined; i++) {
        [claim] = await query<{ claimed_by: string; claim_id: string }>(
          "SELECT claimed_by, claim_id FROM platform.idempotency_records WHERE idem_key = $1 AND state = 'RUNNING'",
          [key],
        );
        if (claim === undefined) await sleep(10);
      }
      if (claim === undefined) throw new Error("A's claim never appeared");
      await sleep(100);
      // A is cut off from PostgreSQL: both claim sessions end, and it cannot take them back.
      a.proc.kill('SIGSTOP');
      const sessions = [
        `svc-idempotency:${claim.claimed_by}`,
        `svc-idempotency-instance:${claim.claimed_by}`,
      ];
      const ended = await query<{ ended: boolean }>(
        'SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity WHERE application_name = ANY($1)',
        [sessions],
      );
      expect(ended.map((r) => r.ended)).toEqual([true, true]);
      for (let i = 0; i < 100; i++) {
        const left = await query(
          'SELECT 1 FROM pg_stat_activity WHERE application_name = ANY($1)',
          [sessions],
        );
        if (left.length === 0) break;
        await sleep(10);
      }
      // What a peer then does with A's claim (IdempotencyService.settleUnanswered): its request
      // has no effect in the engine yet, so the key is released.
      const effects = await query('SELECT 1 FROM paper.idempotency_effects WHERE idem_key = $1', [
        key,
      ]);
      expect(effects).toEqual([]);
      await query(
        "DELETE FROM platform.idempotency_records WHERE idem_key = $1 AND claim_id = $2 AND state = 'RUNNING'",
        [key, claim.claim_id],
      );
    } finally {
      writer.proc.kill('SIGCONT');
      a.proc.kill('SIGCONT');
    }
    // The client's retry, on the writer itself; A's order runs there too, before or after it.
    const retry = await client.place(writer, { key });
    const first = await viaA;

    console.log(`idempotency fence: A answered ${first.status}, the retry ${retry.status}`);
    const placed = (await orderIds()).filter((id) => !before.has(id));
    expect(placed).toHaveLength(1);
    const id = placed[0];
    // One answer is the order (A's may be a 503 if its wait ran out while it was stopped); the
    // other, the second command under the key, names it.
    const answers = [first, retry];
    const refused = answers.filter((r) => r.status === 409);
    expect(refused).toHaveLength(1);
    expect(refused[0].body.error.code).toBe('IDEMPOTENT_REQUEST_APPLIED');
    expect(refused[0].body.error.details).toEqual({
      idempotency_key: key,
      order_ids: [id],
      reference_ids: [],
    });
    const other = answers.find((r) => r !== refused[0])!;
    expect(other.status === 201 ? other.body.id : other.status).toBe(
      other.status === 201 ? id : 503,
    );
    // The key's stored answer is the refusal (the retry's claim), replayed to a third try.
    const third = await client.place(a, { key });
    expect(third.status).toBe(retry.status);
    expect(third.headers.get('idempotent-replayed')).toBe('true');
  });
});
