import { Injectable, Logger } from '@nestjs/common';
import type { Outcome } from '../../engine/index.js';
import { Clock } from '../../common/clock/clock.js';
import { DomainError } from '../../common/errors/domain-error.js';
import type { WorldName } from '../../common/environment.js';
import type { Credential } from '../../common/http/request-context.js';
import { ConfigService } from '../../config/config.service.js';
import { marketPrices } from '../markets/market-summary.js';
import { EngineRegistry } from '../trading/engine-registry.js';
import { alreadyResolved, fromEngine } from '../trading/engine-errors.js';
import type { EngineRuntime } from '../trading/engine-runtime.js';
import type { WalletMovementDto } from '../wallet/dto/wallet.dto.js';
import { movement, walletDto, movementError } from '../wallet/wallet.service.js';
import type { PriceResultDto, ResetResultDto, ResolveResultDto } from './dto/sandbox.dto.js';
import { MARKET_ID } from '../../common/ids/id-patterns.js';
import { IdempotencyService } from '../access/idempotency.service.js';
import { PaperWorldRecords } from '../worlds/paper-world-records.service.js';

/**
 * Sandbox controls of the paper engine (CONTRACT.md): reset, fund, set the reference price,
 * resolve. The routes are sandbox-only, so the credential is always a paper one; every change
 * goes through EngineRuntime, committed before the answer.
 */
@Injectable()
export class SandboxControlsService {
  private readonly log = new Logger('SandboxControls');

  constructor(
    private readonly engines: EngineRegistry,
    private readonly config: ConfigService,
    private readonly clock: Clock,
    private readonly idempotency: IdempotencyService,
    private readonly records: PaperWorldRecords,
  ) {}

  private paper(world: WorldName = 'test'): EngineRuntime {
    return this.engines.get(world);
  }

  /**
   * The caller's paper account back to SANDBOX_STARTING_BALANCE_CENTS: open orders leave the
   * books, orders, positions and ledger rows are deleted (one RESET row restarts the ledger).
   * One engine command and a few set-based statements, whatever the number of orders.
   *
   * ONE transaction on the world's engine connection holds the account reset and the user's
   * other records of that world's database (comments, watchlists, scenarios, exports, the reads
   * of the open RFQs and of the Idempotency-Keys to forget): the cleaners stage deferred,
   * set-based statements in it (PaperWorldRecords.registerStaged), so on PostgreSQL the whole is
   * one round trip (its COMMIT), and a failure anywhere in it rolls all of it back: no
   * half-reset account. What lies outside that database runs after the commit: the platform
   * database's notifications and Idempotency-Key answers, the exports' files and running jobs,
   * the RFQs' holds (each a commit of its own, only when there are open ones), an ephemeral
   * world's crypto indices. A failure there is a 500 although the reset is committed: the
   * caller repeats it, which is safe. API keys, the profile and the live world are not touched.
   */
  async reset(c: Credential): Promise<ResetResultDto> {
    const rt = this.paper(c.world);
    const start = rt.startingBalance;
    rt.ensureAccount(c.userId);
    let forget: () => Promise<number> = () => Promise.resolve(0);
    let finish: () => Promise<Record<string, number>> = () => Promise.resolve({});
    const r = rt.runStaged(
      (e) => e.resetAccount(c.userId, start),
      (db) => {
        // The engine's fence of each forgotten key goes with it (see EngineRuntime).
        forget = this.idempotency.stageForgetPaperAnswers(c.userId, c.world, (owner, key) =>
          rt.forgetAppliedKey(owner, key),
        );
        // The user's records of this paper world only: the shared one's, or the ephemeral world's.
        finish = this.records.stage(c.userId, c.world, db);
      },
    );
    if (!r.ok) throw movementError(r, start, rt, c.userId);
    let cancelled = 0;
    for (const e of r.events) if (e.type === 'account.reset') cancelled = e.cancelledOrders;
    // The reset is committed; a failure here leaves replays of the deleted orders, not a 500.
    await forget().catch((err: unknown) => {
      this.log.warn(`forgetting the paper Idempotency-Key answers failed: ${String(err)}`);
    });
    // Each part runs even when the other failed (a repeat has less to do), then the first
    // failure is a 500.
    const parts = await Promise.allSettled([finish(), this.records.clear(c.userId, c.world)]);
    const failed = parts.find((p) => p.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
    const merged: Record<string, number> = {};
    for (const p of parts) if (p.status === 'fulfilled') Object.assign(merged, p.value);
    const cleared: Record<string, number> = {};
    for (const kind of Object.keys(merged).sort((a, b) => a.localeCompare(b))) {
      cleared[kind] = merged[kind];
    }
    return {
      wallet: walletDto(r.account, 'test'),
      cancelled_orders: cancelled,
      cleared,
      reset_at: this.clock.nowDate().toISOString(),
    };
  }

  /** Adds paper money: a FUNDING ledger row (reference_id: the request id). */
  fund(c: Credential, amount: number, requestId: string): WalletMovementDto {
    const rt = this.paper(c.world);
    rt.ensureAccount(c.userId);
    const r = rt.run((e) => e.deposit(c.userId, amount, requestId), c.idempotency);
    if (!r.ok) throw movementError(r, amount, rt, c.userId);
    return movement(rt, c, r.account);
  }

  /**
   * Moves a paper market's reference price; the house re-quotes at once through the matching
   * path, so the new ladder trades with resting orders it crosses at their limit prices.
   */
  setPrice(marketId: string, price: number, world: WorldName = 'test'): PriceResultDto {
    const rt = this.paper(world);
    rt.closeDue(); // a market past its close time is CLOSED before it is judged
    this.openMarket(rt, marketId);
    if (!rt.setReference(marketId, price)) throw notOpen(marketId, 'not quoted by the feed');
    const { best_bid, best_ask, last_price } = marketPrices(rt.marketSummary(marketId)!);
    return {
      market_id: marketId,
      reference_price: rt.reference(marketId) ?? price,
      best_bid,
      best_ask,
      last_price,
    };
  }

  /**
   * Resolves a paper market: the house quotes are withdrawn, every resting order is cancelled
   * (MARKET_RESOLVED), each holder is paid 100 cents per winning contract and the market is
   * RESOLVED for good. A second resolve is 409 MARKET_ALREADY_RESOLVED.
   */
  resolve(c: Credential, marketId: string, outcome: Outcome): ResolveResultDto {
    return this.resolveMarket(marketId, outcome, c.userId, c.world);
  }

  /**
   * The one resolution path of the paper engine, shared by POST /sandbox/markets/{id}/resolve
   * the sandbox final of a sports event and a creator's POST /markets/{id}/resolve (in either
   * world, `world`): withdraw the house, resolve in the engine (orders cancelled, holders paid),
   * committed before it returns. `payeeId` is the caller whose payout is reported apart. 404 for
   * an unknown market, 409 if already RESOLVED.
   */
  resolveMarket(
    marketId: string,
    outcome: Outcome,
    payeeId: string,
    world: WorldName = 'test',
  ): ResolveResultDto {
    const rt = this.engines.get(world);
    const row = this.market(rt, marketId);
    const summary = rt.marketSummary(marketId)!;
    // The stored status is the record: after a restart the engine holds a resolved market CLOSED.
    if (row.status === 'RESOLVED' || summary.status === 'RESOLVED') {
      throw alreadyResolved(marketId, row.outcome ?? summary.outcome);
    }
    const r = rt.resolveMarket(marketId, outcome);
    if (!r.ok) throw fromEngine(r, { marketId, resolving: true });
    let cancelled = 0;
    let settled = 0;
    let payout = 0;
    let yours = 0;
    for (const e of r.events) {
      if (e.type === 'order.cancelled') cancelled++;
      else if (e.type === 'position.settled') {
        settled++;
        payout += e.payout;
        if (e.accountId === payeeId) yours += e.payout;
      }
    }
    return {
      market_id: marketId,
      status: 'RESOLVED',
      outcome,
      cancelled_orders: cancelled,
      settled_positions: settled,
      payout_cents: payout,
      your_payout_cents: yours,
    };
  }

  /** Whether a paper market is RESOLVED (stored or in the engine): the final skips those. */
  isResolved(marketId: string, world: WorldName = 'test'): boolean {
    const rt = this.paper(world);
    return (
      rt.storedMarket(marketId)?.status === 'RESOLVED' ||
      rt.marketSummary(marketId)?.status === 'RESOLVED'
    );
  }

  /** The stored market row; 404 NOT_FOUND for a malformed or unknown id. */
  private market(rt: EngineRuntime, marketId: string) {
    const row = MARKET_ID.test(marketId) ? rt.storedMarket(marketId) : undefined;
    if (row === undefined || rt.marketSummary(marketId) === undefined) {
      throw new DomainError('NOT_FOUND', `No market ${marketId}`, { market_id: marketId });
    }
    return row;
  }

  private openMarket(rt: EngineRuntime, marketId: string): void {
    const row = this.market(rt, marketId);
    const status = rt.marketSummary(marketId)!.status;
    if (row.status !== 'OPEN' || status !== 'OPEN') {
      const shown = row.status !== 'OPEN' ? row.status : status;
      throw notOpen(marketId, `it is ${shown}`, shown);
    }
  }
}

function notOpen(marketId: string, why: string, status: string | null = null): DomainError {
  return new DomainError('MARKET_NOT_OPEN', `The market is not open (${why})`, {
    market_id: marketId,
    status,
  });
}
