import { Body, Controller, Param, Post, Req } from '@nestjs/common';
import { ApiBody, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { Endpoint } from '../../common/api/endpoint.decorator.js';
import { Cred } from '../../common/http/credential.decorator.js';
import type { Credential } from '../../common/http/request-context.js';
import { WalletMovementDto } from '../wallet/dto/wallet.dto.js';
import { AmountDto, MAX_AMOUNT_CENTS } from '../wallet/money.js';
import {
  PriceResultDto,
  ResetResultDto,
  ResolveDto,
  ResolveResultDto,
  SetPriceDto,
} from './dto/sandbox.dto.js';
import { SandboxControlsService } from './sandbox-controls.service.js';

const SHARED_WORLD =
  'Paper markets are shared by every test key: this changes the market for all sandbox users.';

@ApiTags('Sandbox')
@Controller('sandbox')
export class SandboxControlsController {
  constructor(private readonly sandbox: SandboxControlsService) {}

  @Post('reset')
  @Endpoint({
    summary: 'Reset your paper account to the starting balance',
    description: `Your paper account goes back to SANDBOX_STARTING_BALANCE_CENTS: open orders leave the books, and your paper orders, positions and ledger are deleted; the ledger restarts with one RESET row. Your paper comments, watchlists, notifications, data exports (with their files) and scenarios are deleted too, and your OPEN paper RFQs and your OPEN quotes on others' RFQs are cancelled, each kind counted in cleared ({comments, crypto_candles, exports, notifications, rfq_quotes, rfqs, scenarios, watchlists}); with an ephemeral world's key the world's crypto indices also start again from their seeded prices, their candles deleted (crypto_candles; a paper test key leaves the shared paper indices, 0): a top-level comment of yours that other users replied to stays as a tombstone (status DELETED, body null) so their replies stay, and your paper reports are withdrawn (a comment they hid is VISIBLE again below 5 reports); other users' records are never deleted. With an ephemeral world's key (POST /sandbox/worlds) all of this happens inside that world only: your account, orders, positions, ledger, comments, watchlists, notifications, exports, scenarios and RFQs of that world, and its crypto indices; the shared paper world and other worlds are untouched, and the world itself (its markets, clock and key) stays. Your live-world records, your profile and your API keys are kept. The account reset and the deletion of the records kept in the world's own database (comments, watchlists, scenarios, exports) are one transaction: if it fails, nothing is reset (500 INTERNAL). What lies outside it (notifications, the exports' files and running jobs, the open RFQs and quotes, each ended with its collateral released, an ephemeral world's crypto indices) is cleared once it has committed; if that fails the answer is 500 INTERNAL although the reset is committed: a reset is safe to repeat, and repeating it deletes what is left. The stored Idempotency-Key answers of your paper requests that changed the paper engine (orders, funding) are forgotten with them, so the same key runs its request again instead of replaying an order that no longer exists; refusals and requests still running keep their keys. Takes milliseconds even with 10,000 open orders. Scopes: orders:write and wallet:write (it cancels orders and rewrites the wallet).`,
    auth: 'key',
    scopes: ['orders:write', 'wallet:write'],
    environment: 'sandbox-only',
    type: ResetResultDto,
  })
  reset(@Cred() c: Credential): Promise<ResetResultDto> {
    return this.sandbox.reset(c);
  }

  @Post('wallet/fund')
  @ApiBody({ type: AmountDto })
  @Endpoint({
    summary: 'Add paper money to your paper account',
    description: `Adds amount_cents (integer 1..${MAX_AMOUNT_CENTS}) as a FUNDING ledger row (reference_id: the request id). Scope wallet:write.`,
    auth: 'key',
    scopes: ['wallet:write'],
    environment: 'sandbox-only',
    status: 201,
    type: WalletMovementDto,
    errors: [400],
  })
  fund(
    @Cred() c: Credential,
    @Body() body: AmountDto,
    @Req() req: FastifyRequest,
  ): WalletMovementDto {
    return this.sandbox.fund(c, body.amount_cents, String(req.id));
  }

  @Post('markets/:id/price')
  @ApiBody({ type: SetPriceDto })
  @Endpoint({
    summary: "Move a paper market's reference price",
    description: `${SHARED_WORLD} Sets the reference (YES cents 1..99) and re-quotes the house ladder at once through the normal matching: when the new ladder crosses resting orders they fill at their limit prices, in time priority. The feed keeps walking from the new price. Answers the reference and the book top after the re-quote. 404 NOT_FOUND for an unknown market, 422 MARKET_NOT_OPEN unless OPEN. Scope orders:write.`,
    auth: 'key',
    scopes: ['orders:write'],
    environment: 'sandbox-only',
    type: PriceResultDto,
    errors: [400, 404, 422],
  })
  setPrice(
    @Cred() c: Credential,
    @Param('id') id: string,
    @Body() body: SetPriceDto,
  ): PriceResultDto {
    return this.sandbox.setPrice(id, body.price, c.world);
  }

  @Post('markets/:id/resolve')
  @ApiBody({ type: ResolveDto })
  @Endpoint({
    summary: 'Resolve a paper market YES or NO',
    description: `${SHARED_WORLD} Withdraws the house quotes, cancels every resting order (cancel_reason MARKET_RESOLVED), pays 100 cents per winning contract to each holder (a SETTLEMENT ledger row) and closes the market for good: new orders get 422 MARKET_NOT_OPEN, a second resolve 409 MARKET_ALREADY_RESOLVED. 404 NOT_FOUND for an unknown market. Scope orders:write.`,
    auth: 'key',
    scopes: ['orders:write'],
    environment: 'sandbox-only',
    type: ResolveResultDto,
    errors: [400, 404, 409],
  })
  resolve(
    @Cred() c: Credential,
    @Param('id') id: string,
    @Body() body: ResolveDto,
  ): ResolveResultDto {
    return this.sandbox.resolve(c, id, body.outcome);
  }
}
