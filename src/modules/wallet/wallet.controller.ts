import { Body, Controller, Get, Post, Query, Req } from '@nestjs/common';
import { ApiBody, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { Endpoint } from '../../common/api/endpoint.decorator.js';
import type { Lifecycle } from '../../common/api/lifecycle.js';
import { Cred } from '../../common/http/credential.decorator.js';
import type { Credential } from '../../common/http/request-context.js';
import {
  ListTransactionsQueryDto,
  TransactionPageDto,
  WalletDto,
  WalletMovementDto,
} from './dto/wallet.dto.js';
import { AmountDto, MAX_AMOUNT_CENTS } from './money.js';
import { WalletService } from './wallet.service.js';

/** SPEC.md, Deprecated operations: no sunset scheduled; the successor is the cursor variant. */
export const WALLET_TRANSACTIONS_LIFECYCLE: Lifecycle = {
  state: 'DEPRECATED',
  deprecatedOn: '2026-05-08',
  successor: '/api/v1/transactions/cursor',
};

const LEDGER_TEXT =
  'The ledger of your account in the engine of your credential (test key: paper; live key or session: live), newest first. Types: DEPOSIT, WITHDRAWAL, TRADE, SETTLEMENT, FUNDING (paper money: the starting balance and sandbox funding), RESET (a sandbox reset clears the ledger and restarts it with one RESET row). The amounts of all rows sum to the current balance.';

@ApiTags('Wallet')
@Controller()
export class WalletController {
  constructor(private readonly wallet: WalletService) {}

  @Get('wallet')
  @Endpoint({
    summary: 'Your balance, reservation and available cash',
    description:
      'From the engine of your credential: a test key sees its paper account (opened on first use with SANDBOX_STARTING_BALANCE_CENTS), a live key or a session its live account. available_cents = balance_cents - reserved_cents (worst case of your resting orders, plus the collateral of your OPEN RFQ quotes).',
    auth: 'key',
    scopes: ['wallet:read'],
    type: WalletDto,
  })
  get(@Cred() c: Credential): WalletDto {
    return this.wallet.wallet(c);
  }

  @Get('transactions/cursor')
  @Endpoint({
    summary: 'Your ledger, newest first (keyset cursor)',
    description: `${LEDGER_TEXT} Keyset on the entry id: entries added while you page never shift, duplicate or hide the ones you are paging through.`,
    auth: 'key',
    scopes: ['wallet:read'],
    type: TransactionPageDto,
    errors: [400],
  })
  transactions(@Cred() c: Credential, @Query() q: ListTransactionsQueryDto): TransactionPageDto {
    return this.wallet.transactions(c, q);
  }

  @Get('wallet/transactions')
  @Endpoint({
    summary: 'Your ledger (deprecated: use GET /api/v1/transactions/cursor)',
    description: `Deprecated on 2026-05-08, no sunset scheduled. Answers exactly what GET /api/v1/transactions/cursor answers, with Deprecation and Link (successor-version) headers. ${LEDGER_TEXT}`,
    auth: 'key',
    scopes: ['wallet:read'],
    lifecycle: WALLET_TRANSACTIONS_LIFECYCLE,
    type: TransactionPageDto,
    errors: [400],
  })
  legacyTransactions(
    @Cred() c: Credential,
    @Query() q: ListTransactionsQueryDto,
  ): TransactionPageDto {
    return this.wallet.transactions(c, q);
  }

  @Post('wallet/deposits')
  @ApiBody({ type: AmountDto })
  @Endpoint({
    summary: 'Deposit real money (live keys only)',
    description: `Real-money endpoint: test keys and env:paper keys get 403 TEST_KEY_LIVE_ENDPOINT. amount_cents is an integer 1..${MAX_AMOUNT_CENTS}. Writes a DEPOSIT ledger row (reference_id: the request id) and answers it with the new wallet. Send an Idempotency-Key so a retry cannot deposit twice.`,
    auth: 'key',
    scopes: ['wallet:write'],
    environment: 'real-money',
    status: 201,
    type: WalletMovementDto,
    errors: [400],
  })
  deposit(
    @Cred() c: Credential,
    @Body() body: AmountDto,
    @Req() req: FastifyRequest,
  ): WalletMovementDto {
    return this.wallet.deposit(c, body.amount_cents, String(req.id));
  }

  @Post('wallet/withdrawals')
  @ApiBody({ type: AmountDto })
  @Endpoint({
    summary: 'Withdraw real money (live keys only; needs a fresh MFA step-up)',
    description: `Real-money endpoint: test keys and env:paper keys get 403 TEST_KEY_LIVE_ENDPOINT. Needs an MFA step-up (POST /api/v1/security/mfa/step-up) within the last MFA_STEP_UP_TTL_SECONDS (300 s), else 403 MFA_STEP_UP_REQUIRED. At most available_cents, else 422 INSUFFICIENT_FUNDS. amount_cents is an integer 1..${MAX_AMOUNT_CENTS}. Writes a WITHDRAWAL ledger row (negative amount, reference_id: the request id). A refusal changes nothing. Send an Idempotency-Key so a retry cannot withdraw twice.`,
    auth: 'key',
    scopes: ['wallet:write'],
    environment: 'real-money',
    status: 201,
    type: WalletMovementDto,
    errors: [400, 422],
  })
  withdraw(
    @Cred() c: Credential,
    @Body() body: AmountDto,
    @Req() req: FastifyRequest,
  ): Promise<WalletMovementDto> {
    return this.wallet.withdraw(c, body.amount_cents, String(req.id));
  }
}
