/**
 * Where the engine finds orders by their public id, keeps final orders readable for a while and
 * recycles order objects. The only id lookup an order meets is here (an {@link OrderIdTable}), and
 * only when it rests (cancel and amend name orders by id): an order that trades or expires on
 * arrival enters the table only when a lookup misses while it is still retained (see unindexed).
 */
import { OrderIdTable } from './order-id-table.js';
import { BookOrder } from './order.js';

/** Upper bound of the recycled-order free list (bounds memory after a mass cancel). */
const MAX_SPARE_ORDERS = 65_536;

export class OrderRegistry {
  /**
   * Open orders by id, and the retention ring's final orders too once someone has asked for a
   * final order. An order that rested is added here once and removed once, when it leaves the
   * ring; it is not moved to a second table when it ends.
   */
  private readonly byId = new OrderIdTable();
  /**
   * How many of the newest retention-ring entries may be missing from {@link byId} (retired
   * orders that never rested). A lookup that misses indexes them first, then looks again: most
   * final orders leave the ring before any lookup misses, so they never cost a hash insert and
   * removal, and a miss costs at most the retirements since the previous miss.
   */
  private unindexed = 0;
  private readonly closedRing: BookOrder[] = [];
  private closedNext = 0;
  private readonly spare: BookOrder[] = [];
  /** Engine-wide time priority: the last sequence handed out (or restored). */
  private sequence = 0;

  /**
   * @param closedRetention how many final orders stay readable (getOrder, ORDER_NOT_OPEN); the
   *   oldest are forgotten first.
   */
  constructor(private readonly closedRetention: number) {}

  nextSequence(): number {
    return ++this.sequence;
  }

  /** A restored order's sequence: numbering goes on above the largest seen. */
  observeSequence(sequence: number): void {
    if (sequence > this.sequence) this.sequence = sequence;
  }

  /** A fresh order object, reusing a recycled instance when there is one. */
  newOrder(): BookOrder {
    return this.spare.pop() ?? new BookOrder();
  }

  /** Makes a resting order findable by id (once). */
  index(order: BookOrder): void {
    if (order.idSlot < 0) this.byId.add(order);
  }

  /** An open order, or a final one still within the retention window. */
  find(id: string): BookOrder | undefined {
    const found = this.byId.get(id);
    if (found !== undefined || this.unindexed === 0) return found;
    const ring = this.closedRing;
    let slot = this.closedNext;
    for (let n = this.unindexed; n > 0; n--) {
      slot = (slot === 0 ? ring.length : slot) - 1;
      this.index(ring[slot]);
    }
    this.unindexed = 0;
    return this.byId.get(id);
  }

  /**
   * Called once an order is final: keeps it readable within a bounded FIFO. A ring decides what
   * to forget; evicting through the Map's own iteration order would rescan the holes left by
   * deletions.
   */
  retire(order: BookOrder): void {
    const cap = this.closedRetention;
    if (cap <= 0) {
      this.forget(order);
      return;
    }
    const ring = this.closedRing;
    const slot = this.closedNext;
    if (ring.length < cap) ring.push(order);
    else {
      this.forget(ring[slot]);
      ring[slot] = order;
    }
    this.closedNext = slot + 1 === cap ? 0 : slot + 1;
    if (this.unindexed < ring.length) this.unindexed++;
  }

  /** Forgets an order at once, not kept for getOrder (an account reset's orders). */
  drop(order: BookOrder): void {
    this.forget(order);
  }

  private forget(order: BookOrder): void {
    // Ids are unique among open and retained orders (placement, restore and the quote cross all
    // refuse a known id), so an indexed order is the table's entry, removed by its slot.
    if (order.idSlot >= 0) this.byId.remove(order);
    this.recycle(order);
  }

  /**
   * Keeps a forgotten order object for reuse: resting orders live long enough to be promoted to
   * the old generation, so allocating a fresh one per order is what the garbage collector spent
   * most of its time on. The instance stays intact until the next {@link newOrder}, and a
   * command creates its order before anything can be retired, so a just-retired order can
   * still be read (snapshotted) until the command returns.
   */
  private recycle(order: BookOrder): void {
    if (this.spare.length < MAX_SPARE_ORDERS) this.spare.push(order);
  }
}
