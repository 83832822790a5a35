import { createHmac } from 'node:crypto';

/**
 * `t=<unix>,v1=<hex>[,v1=<hex>]`: one HMAC-SHA256 over `<t>.<raw body>` per live secret (the
 * Stripe scheme, so stripe-node's verifier accepts it). The active secret signs first.
 */
export function signatureHeader(
  body: string,
  unixSeconds: number,
  secrets: readonly string[],
): string {
  const parts = [`t=${unixSeconds}`];
  for (const secret of secrets) {
    parts.push(`v1=${createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex')}`);
  }
  return parts.join(',');
}
