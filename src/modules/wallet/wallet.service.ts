import { Injectable } from '@nestjs/common';
import type { AccountSnapshot, Failure } from '../../engine/index.js';
import type { Environment } from '../../common/environment.js';
import { DomainError } from '../../common/errors/domain-error.js';
import type { Credential } from '../../common/http/request-context.js';
import { paginate, type Page } from '../../common/pagination/paginate.js';
import { ConfigService } from '../../config/config.service.js';
import { MfaService } from '../security/mfa.service.js';
import { EngineRegistry } from '../trading/engine-registry.js';
import type { EngineRuntime } from '../trading/engine-runtime.js';
import { fromEngine, insufficientFunds } from '../trading/engine-errors.js';
import type { LedgerRow } from '../trading/stores/ledger.store.js';
import type {
  ListTransactionsQueryDto,
  TransactionDto,
  WalletDto,
  WalletMovementDto,
} from './dto/wallet.dto.js';

/**
 * Wallet use cases over the caller's engine (a test key: paper; a live key or a session: live).
 * Reads come from the engine (balances) and the engine database (ledger); money moves through
 * EngineRuntime.run, which commits the ledger row before it returns.
 */
@Injectable()
export class WalletService {
  constructor(
    private readonly engines: EngineRegistry,
    private readonly config: ConfigService,
    private readonly mfa: MfaService,
  ) {}

  wallet(c: Credential): WalletDto {
    const rt = this.engines.forCredential(c);
    return walletDto(rt.account(c.userId)!, c.environment);
  }

  /** The ledger, newest first, keyset-paginated on id: rows added while paging never shift it. */
  transactions(c: Credential, q: ListTransactionsQueryDto): Page<TransactionDto> {
    const rt = this.engines.forCredential(c);
    return paginate({
      list: `transactions:${c.environment}`,
      keys: ['id'],
      query: q,
      fetch: (after, take) =>
        rt.ledgerPage(c.userId, { beforeId: after?.[0], type: q.type, limit: take }),
      keyOf: (r) => [r.id],
      map: transactionDto,
    });
  }

  /** Real-money deposit (the route refuses test and env:paper keys before this runs). */
  deposit(c: Credential, amount: number, requestId: string): WalletMovementDto {
    const rt = this.engines.forCredential(c);
    const r = rt.run((e) => e.deposit(c.userId, amount, requestId), c.idempotency);
    if (!r.ok) throw movementError(r, amount, rt, c.userId);
    return movement(rt, c, r.account);
  }

  /**
   * Real-money withdrawal: needs an MFA step-up within MFA_STEP_UP_TTL_SECONDS, then at most the
   * available balance. A refusal changes nothing (not even opening an account).
   */
  async withdraw(c: Credential, amount: number, requestId: string): Promise<WalletMovementDto> {
    if (!(await this.mfa.hasFreshStepUp(c.userId))) {
      const ttl = this.config.values.mfaStepUpTtlSeconds;
      throw new DomainError(
        'MFA_STEP_UP_REQUIRED',
        `A withdrawal needs an MFA step-up within the last ${ttl} s: POST /api/v1/security/mfa/step-up`,
        { step_up_ttl_seconds: ttl },
      );
    }
    const rt = this.engines.get(c.world);
    if (rt.account(c.userId) === undefined) {
      throw insufficientFunds({ requested: amount, available: 0 });
    }
    const r = rt.run((e) => e.withdraw(c.userId, amount, requestId), c.idempotency);
    if (!r.ok) throw movementError(r, amount, rt, c.userId);
    return movement(rt, c, r.account);
  }
}

/** The ledger row just written by a money command and the account after it. */
export function movement(
  rt: EngineRuntime,
  c: Credential,
  account: AccountSnapshot,
): WalletMovementDto {
  return {
    transaction: transactionDto(rt.lastLedgerRowOf(c.userId)!),
    wallet: walletDto(account, c.environment),
  };
}

export function walletDto(a: AccountSnapshot, env: Environment): WalletDto {
  return {
    environment: env,
    currency: 'USD',
    balance_cents: a.balance,
    reserved_cents: a.reserved,
    available_cents: a.available,
  };
}

export function transactionDto(r: LedgerRow): TransactionDto {
  return {
    id: r.id,
    type: r.type,
    amount_cents: r.amount_cents,
    balance_after_cents: r.balance_after_cents,
    reference_id: r.reference_id,
    created_at: r.created_at,
  };
}

/** A deposit, withdrawal or funding the engine refused, as an API error. */
export function movementError(f: Failure, amount: number, rt: EngineRuntime, userId: string) {
  return fromEngine(f, {
    movement: { requested: amount, available: rt.available(userId) ?? 0 },
  });
}
