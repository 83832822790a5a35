import { ApiProperty } from '@nestjs/swagger';
import { IsIn, IsInt, Max, Min } from 'class-validator';
import { WalletDto } from '../../wallet/dto/wallet.dto.js';

export class ResetResultDto {
  @ApiProperty({ type: WalletDto, description: 'The paper wallet after the reset' })
  wallet: WalletDto;

  @ApiProperty({ type: 'integer', description: 'Open orders removed from the books' })
  cancelled_orders: number;

  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'integer' },
    example: { comments: 3, notifications: 1, watchlists: 2 },
    description:
      "How many of the user's other paper records the reset deleted, by kind (comments, watchlists, notifications, rfqs, rfq_quotes, exports, scenarios, crypto_candles); crypto_candles counts an ephemeral world's crypto candles deleted as its indices start again from their seeded prices (always 0 with a paper test key: the shared paper indices are every test key's and stay as they are); rfqs counts your OPEN RFQs cancelled (every quote on them ends and its responder's reservation is released), rfq_quotes your OPEN quotes on other users' RFQs cancelled; exports your paper data exports deleted with their files (a running one is stopped); comments counts the user's comments deleted or left as tombstones (a top-level comment other users replied to stays, DELETED with body null, so their replies stay). Other users' records and the live world are never touched.",
  })
  cleared: Record<string, number>;

  @ApiProperty({ format: 'date-time' })
  reset_at: string;
}

export class SetPriceDto {
  @ApiProperty({
    type: 'integer',
    minimum: 1,
    maximum: 99,
    example: 60,
    description: 'New reference probability, YES cents 1..99',
  })
  @IsInt({ message: 'price must be an integer number of cents' })
  @Min(1, { message: 'price must be at least 1' })
  @Max(99, { message: 'price must be at most 99' })
  price: number;
}

export class PriceResultDto {
  @ApiProperty()
  market_id: string;

  @ApiProperty({ type: 'integer', description: 'The paper reference price now, YES cents' })
  reference_price: number;

  @ApiProperty({ type: 'integer', nullable: true, description: 'Best bid after the re-quote' })
  best_bid: number | null;

  @ApiProperty({ type: 'integer', nullable: true, description: 'Best ask after the re-quote' })
  best_ask: number | null;

  @ApiProperty({ type: 'integer', nullable: true, description: 'Last trade price, YES cents' })
  last_price: number | null;
}

export class ResolveDto {
  @ApiProperty({ enum: ['YES', 'NO'] })
  @IsIn(['YES', 'NO'], { message: 'outcome must be YES or NO' })
  outcome: 'YES' | 'NO';
}

export class ResolveResultDto {
  @ApiProperty()
  market_id: string;

  @ApiProperty({ enum: ['RESOLVED'] })
  status: 'RESOLVED';

  @ApiProperty({ enum: ['YES', 'NO'] })
  outcome: 'YES' | 'NO';

  @ApiProperty({
    type: 'integer',
    description: 'Resting orders cancelled with cancel_reason MARKET_RESOLVED (all accounts)',
  })
  cancelled_orders: number;

  @ApiProperty({ type: 'integer', description: 'Positions settled (all accounts)' })
  settled_positions: number;

  @ApiProperty({
    type: 'integer',
    description: 'Paid out in total: 100 cents per winning contract (all accounts)',
  })
  payout_cents: number;

  @ApiProperty({ type: 'integer', description: 'Paid to you (SETTLEMENT ledger row)' })
  your_payout_cents: number;
}
