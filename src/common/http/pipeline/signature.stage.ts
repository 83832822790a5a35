import { DomainError } from '../../errors/domain-error.js';
import type { ReplayCache } from '../../../modules/access/replay-cache.js';
import {
  SIGNATURE_SKEW_SECONDS,
  verifyRequestSignature,
  type SignedRequest,
} from '../../../modules/access/request-signature.js';

/**
 * Signature, for a key that requires one: the HMAC over the request (request-signature.ts) within
 * the skew window of `now`, then single use. The replay check comes after the signature verified,
 * so a forged one never fills the cache.
 */
export async function checkSignature(
  key: { id: string; signingRequired: boolean },
  signingSecret: string | null | undefined,
  signed: SignedRequest,
  now: number,
  replays: ReplayCache,
): Promise<void> {
  if (!key.signingRequired) return;
  const ok = verifyRequestSignature(signed, signingSecret ?? '', Math.floor(now / 1000));
  if (await replays.seen(key.id, ok.signature, ok.replayableUntilMs)) {
    throw new DomainError(
      'SIGNATURE_REPLAYED',
      `This signature was already used: sign each request afresh (a new X-Svc-Timestamp changes the signature); a signature is single-use for the +/-${SIGNATURE_SKEW_SECONDS} s window`,
      { window_seconds: SIGNATURE_SKEW_SECONDS },
    );
  }
}
