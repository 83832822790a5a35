import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn } from 'class-validator';
import { PageQueryDto } from '../../../common/pagination/page-query.dto.js';
import { OptionalField } from '../../../common/validation/fields.js';

export const LEDGER_TYPES = [
  'DEPOSIT',
  'WITHDRAWAL',
  'TRADE',
  'SETTLEMENT',
  'FUNDING',
  'RESET',
] as const;
export type LedgerType = (typeof LEDGER_TYPES)[number];

export class WalletDto {
  @ApiProperty({ enum: ['live', 'test'], description: 'Engine this wallet lives in' })
  environment: 'live' | 'test';

  @ApiProperty({ enum: ['USD'] })
  currency: 'USD';

  @ApiProperty({ type: 'integer', description: 'Cash balance, cents', example: 1_000_000 })
  balance_cents: number;

  @ApiProperty({
    type: 'integer',
    description:
      'Worst-case cash held for your resting orders, plus the collateral of your OPEN RFQ quotes, cents',
    example: 0,
  })
  reserved_cents: number;

  @ApiProperty({
    type: 'integer',
    description: 'balance_cents - reserved_cents: what new orders and withdrawals may use',
    example: 1_000_000,
  })
  available_cents: number;
}

export class TransactionDto {
  @ApiProperty({ example: 'txn_01jd3x000000000000abcd' })
  id: string;

  @ApiProperty({
    enum: LEDGER_TYPES,
    description:
      'DEPOSIT / WITHDRAWAL (live money in and out), TRADE (cash of one fill), SETTLEMENT (payout of a resolved market), FUNDING (paper money added: starting balance and POST /sandbox/wallet/fund), RESET (POST /sandbox/reset: the ledger restarts with this row)',
  })
  type: LedgerType;

  @ApiProperty({
    type: 'integer',
    description: 'Signed change of the balance, cents (negative: money out)',
  })
  amount_cents: number;

  @ApiProperty({ type: 'integer', description: 'Balance right after this entry, cents' })
  balance_after_cents: number;

  @ApiProperty({
    type: 'string',
    nullable: true,
    description:
      'What caused it: the trade id (fil_...) of a TRADE, the market id of a SETTLEMENT, the request id (req_...) of a deposit, withdrawal or funding',
  })
  reference_id: string | null;

  @ApiProperty({ format: 'date-time' })
  created_at: string;
}

export class TransactionPageDto {
  @ApiProperty({ type: [TransactionDto], description: 'Newest first' })
  data: TransactionDto[];

  @ApiProperty({ type: 'string', nullable: true })
  next_cursor: string | null;
}

export class ListTransactionsQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: LEDGER_TYPES, description: 'Only entries of this type' })
  @OptionalField()
  @IsIn(LEDGER_TYPES)
  type?: LedgerType;
}

/** Answer of a deposit, a withdrawal or a sandbox funding: the ledger row and the new wallet. */
export class WalletMovementDto {
  @ApiProperty({ type: TransactionDto })
  transaction: TransactionDto;

  @ApiProperty({ type: WalletDto })
  wallet: WalletDto;
}
