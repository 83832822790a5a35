import { randomFillSync } from 'node:crypto';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz'; // Crockford base32, lower case

/**
 * Opaque prefixed ids (`usr_`, `mkt_`, `ord_`, ...). The first 10 characters encode the creation
 * millisecond so ids sort by creation time, which keyset pagination relies on; the rest is random.
 */
export class IdGenerator {
  private lastMs = -1;
  /** encodeTime(lastMs): ids come many to a millisecond (all of them on a stopped test clock). */
  private lastTime = '';
  private counter = 0;

  constructor(private readonly now: () => number = Date.now) {}

  next(prefix: string): string {
    let ms = this.now();
    if (ms <= this.lastMs) {
      // Same or earlier millisecond: keep ids strictly increasing within this process.
      ms = this.lastMs;
      this.counter++;
    } else {
      this.counter = 0;
      this.lastTime = encodeTime(ms);
    }
    this.lastMs = ms;
    return `${prefix}_${this.lastTime}${encodeCounter(this.counter)}${randomPart(8)}`;
  }
}

function encodeTime(ms: number): string {
  let out = '';
  let v = ms;
  for (let i = 0; i < 10; i++) {
    out = ALPHABET[v % 32] + out;
    v = Math.floor(v / 32);
  }
  return out;
}

function encodeCounter(n: number): string {
  let out = '';
  let v = n;
  for (let i = 0; i < 4; i++) {
    out = ALPHABET[v % 32] + out;
    v = Math.floor(v / 32);
  }
  return out;
}

// One CSPRNG refill per 512 ids instead of a system call per id (ids are minted on the hot path).
const POOL = Buffer.alloc(4096);
let poolAt = POOL.length;

function randomPart(len: number): string {
  if (poolAt + len > POOL.length) {
    randomFillSync(POOL);
    poolAt = 0;
  }
  let out = '';
  for (let i = 0; i < len; i++) out += ALPHABET[POOL[poolAt + i] & 31];
  poolAt += len;
  return out;
}
