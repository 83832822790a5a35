import { createHmac, randomBytes } from 'node:crypto';
import { safeEqual } from './tokens.js';

const B32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

export function base32Encode(buf: Buffer): string {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of buf) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += B32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += B32[(value << (5 - bits)) & 31];
  return out;
}

export function base32Decode(s: string): Buffer {
  const clean = s.replace(/=+$/, '').toUpperCase();
  let bits = 0;
  let value = 0;
  const out: number[] = [];
  for (const ch of clean) {
    const idx = B32.indexOf(ch);
    if (idx < 0) throw new Error('bad base32');
    value = (value << 5) | idx;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 255);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}

export function newTotpSecret(): string {
  return base32Encode(randomBytes(20));
}

export const TOTP_STEP_SECONDS = 30;

/** RFC 6238 TOTP (HMAC-SHA1, 30 s step, 6 digits) for a time-step counter. */
export function totpAt(secretB32: string, counter: number): string {
  const msg = Buffer.alloc(8);
  msg.writeBigUInt64BE(BigInt(counter));
  const h = createHmac('sha1', base32Decode(secretB32)).update(msg).digest();
  const offset = h[h.length - 1] & 0xf;
  const bin =
    ((h[offset] & 0x7f) << 24) | (h[offset + 1] << 16) | (h[offset + 2] << 8) | h[offset + 3];
  return String(bin % 1_000_000).padStart(6, '0');
}

/**
 * The counter a code matches within one step either side of now (clock drift), or null.
 * Callers refuse counters at or below the last one used, so a code cannot be replayed.
 */
export function matchTotp(secretB32: string, code: string, nowSeconds: number): number | null {
  if (!/^\d{6}$/.test(code)) return null;
  const current = Math.floor(nowSeconds / TOTP_STEP_SECONDS);
  for (const c of [current - 1, current, current + 1]) {
    if (safeEqual(totpAt(secretB32, c), code)) return c;
  }
  return null;
}
