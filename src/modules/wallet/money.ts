import { ApiProperty } from '@nestjs/swagger';
import { IsInt, Max, Min } from 'class-validator';

/**
 * Largest amount one deposit, withdrawal or sandbox funding may move: 1,000,000,000 cents
 * ($10,000,000). Larger amounts are refused with 400 VALIDATION_FAILED; so are 0, negative,
 * fractional and non-number amounts (a numeric string is not a number).
 */
export const MAX_AMOUNT_CENTS = 1_000_000_000;

/** Body of POST /wallet/deposits, /wallet/withdrawals and /sandbox/wallet/fund. */
export class AmountDto {
  @ApiProperty({
    type: 'integer',
    minimum: 1,
    maximum: MAX_AMOUNT_CENTS,
    example: 50_000,
    description: `Integer cents, 1..${MAX_AMOUNT_CENTS} (a JSON number; strings are refused)`,
  })
  @IsInt({ message: 'amount_cents must be an integer number of cents' })
  @Min(1, { message: 'amount_cents must be at least 1' })
  @Max(MAX_AMOUNT_CENTS, { message: `amount_cents must be at most ${MAX_AMOUNT_CENTS}` })
  amount_cents: number;
}
