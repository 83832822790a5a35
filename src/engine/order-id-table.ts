/**
 * Orders by public id: an open-addressing hash table (linear probing, backward-shift deletion)
 * whose slots and hashes are typed arrays, and whose entries know their own slot.
 *
 * It replaces a `Map<string, BookOrder>` that cost a fifth of the engine bench's time: every
 * order that leaves the engine's memory is deleted by its id string long after it was inserted,
 * and V8's map then walks a cold bucket chain and compares cold strings. Here removal needs no
 * hashing and no string at all (the order holds its slot), and a lookup compares 32-bit hashes
 * in a typed array before it touches any order. Public ids stay opaque strings at the API; only
 * the engine's storage of them changed.
 */
import type { BookOrder } from './order.js';

const INITIAL_CAPACITY = 1 << 12;

/** FNV-1a over the id's UTF-16 code units: ids are short, and their random or counter tail spreads well. */
function hashId(id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
  return h | 0;
}

export class OrderIdTable {
  private hashes = new Int32Array(INITIAL_CAPACITY);
  private slots: (BookOrder | null)[] = new Array<BookOrder | null>(INITIAL_CAPACITY).fill(null);
  private mask = INITIAL_CAPACITY - 1;
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** The order with this id, if it is in the table. */
  get(id: string): BookOrder | undefined {
    const h = hashId(id);
    const hashes = this.hashes;
    const slots = this.slots;
    const mask = this.mask;
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const o = slots[i];
      if (o === null) return undefined;
      if (hashes[i] === h && o.id === id) return o;
    }
  }

  /** Adds an order that is not in the table (its `idSlot` is -1); ids are unique. */
  add(order: BookOrder): void {
    if ((this.count + 1) * 2 > this.slots.length) this.grow();
    this.put(order, hashId(order.id));
    this.count++;
  }

  private put(order: BookOrder, h: number): void {
    const mask = this.mask;
    let i = h & mask;
    while (this.slots[i] !== null) i = (i + 1) & mask;
    this.slots[i] = order;
    this.hashes[i] = h;
    order.idSlot = i;
  }

  /**
   * Takes the order out by its slot, then shifts back the entries of its probe run that would
   * no longer be found past the hole (no tombstones, so the table never needs a clean-up pass).
   */
  remove(order: BookOrder): void {
    const slots = this.slots;
    const hashes = this.hashes;
    const mask = this.mask;
    let hole = order.idSlot;
    order.idSlot = -1;
    for (let j = (hole + 1) & mask; ; j = (j + 1) & mask) {
      const o = slots[j];
      if (o === null) break;
      const home = hashes[j] & mask;
      // The entry at j stays when its home lies cyclically in (hole, j].
      const stays = hole <= j ? hole < home && home <= j : hole < home || home <= j;
      if (stays) continue;
      slots[hole] = o;
      hashes[hole] = hashes[j];
      o.idSlot = hole;
      hole = j;
    }
    slots[hole] = null;
    this.count--;
  }

  private grow(): void {
    const old = this.slots;
    const oldHashes = this.hashes;
    const capacity = old.length * 2;
    this.hashes = new Int32Array(capacity);
    this.slots = new Array<BookOrder | null>(capacity).fill(null);
    this.mask = capacity - 1;
    for (let i = 0; i < old.length; i++) {
      const o = old[i];
      if (o !== null) this.put(o, oldHashes[i]);
    }
  }
}
