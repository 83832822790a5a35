/**
 * USD amounts on the wire: a decimal string with exactly 2 decimals ("95000.00"), never a float
 * (a float would lose cents above 2^53 / 100 and print 0.1 + 0.2). Inside, integer cents.
 */

/** "95000.00" from 9500000 cents. */
export function formatUsd(cents: number): string {
  const whole = Math.floor(cents / 100);
  const rest = cents % 100;
  return `${whole}.${rest < 10 ? '0' : ''}${rest}`;
}

/** What a price sent to the service must look like: digits, at most 2 decimals, no sign. */
export const USD_PATTERN = /^(?:0|[1-9]\d{0,9})(?:\.\d{1,2})?$/;

/**
 * A price that must be positive (an index level): {@link USD_PATTERN} without zero ("0", "0.0",
 * "0.00"), 0.01..9999999999.99. Stated as the pattern so that the request schema says it too.
 */
export const POSITIVE_USD_PATTERN = /^(?:0\.(?:0[1-9]|[1-9]\d?)|[1-9]\d{0,9}(?:\.\d{1,2})?)$/;

/** Integer cents of a decimal USD string ("123.4" -> 12340); null when it is not one. */
export function parseUsd(value: string): number | null {
  if (!USD_PATTERN.test(value)) return null;
  const [whole, frac = ''] = value.split('.');
  return Number(whole) * 100 + Number(frac.padEnd(2, '0'));
}
