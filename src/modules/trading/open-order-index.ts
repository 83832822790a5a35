import type { EngineEvent, OrderSnapshot } from '../../engine/index.js';

interface Entry {
  accountId: string;
  owner: string;
  clientKey: string | null;
}

/**
 * Open orders by the credential that placed them, for the service's own rules: client_order_id
 * is unique per credential among open orders, and each credential has a cap on open orders. The
 * credential is the API key (the order's tag); orders placed with a session token (no tag) share
 * one bucket per user, so a session is held to the same rules as a key. Kept in step with
 * committed events.
 */
export class OpenOrderIndex {
  private readonly byId = new Map<string, Entry>();
  private readonly byClientKey = new Map<string, string>();
  private readonly countByOwner = new Map<string, number>();

  /** The bucket of an order placed with key `tag`, or with a session of `accountId` (tag null). */
  static ownerOf(tag: string | null, accountId: string): string {
    return tag ?? `session:${accountId}`;
  }

  private static clientKey(owner: string, clientOrderId: string | null): string | null {
    return clientOrderId === null ? null : `${owner}\u0000${clientOrderId}`;
  }

  orderForClientId(owner: string, clientOrderId: string): string | undefined {
    return this.byClientKey.get(OpenOrderIndex.clientKey(owner, clientOrderId)!);
  }

  openCount(owner: string): number {
    return this.countByOwner.get(owner) ?? 0;
  }

  add(o: Pick<OrderSnapshot, 'id' | 'accountId' | 'tag' | 'clientOrderId'>): void {
    if (this.byId.has(o.id)) return;
    const owner = OpenOrderIndex.ownerOf(o.tag, o.accountId);
    const clientKey = OpenOrderIndex.clientKey(owner, o.clientOrderId);
    this.byId.set(o.id, { accountId: o.accountId, owner, clientKey });
    if (clientKey !== null) this.byClientKey.set(clientKey, o.id);
    this.countByOwner.set(owner, (this.countByOwner.get(owner) ?? 0) + 1);
  }

  remove(orderId: string): void {
    const e = this.byId.get(orderId);
    if (e === undefined) return;
    this.byId.delete(orderId);
    if (e.clientKey !== null && this.byClientKey.get(e.clientKey) === orderId)
      this.byClientKey.delete(e.clientKey);
    const n = (this.countByOwner.get(e.owner) ?? 1) - 1;
    if (n <= 0) this.countByOwner.delete(e.owner);
    else this.countByOwner.set(e.owner, n);
  }

  apply(events: readonly EngineEvent[]): void {
    for (const e of events) {
      switch (e.type) {
        case 'order.accepted':
          this.add(e.order);
          break;
        case 'order.updated':
          if (e.status === 'FILLED') this.remove(e.orderId);
          break;
        case 'order.cancelled':
        case 'order.expired':
          this.remove(e.orderId);
          break;
        case 'account.reset':
          for (const [id, entry] of this.byId) if (entry.accountId === e.accountId) this.remove(id);
          break;
        default:
          break;
      }
    }
  }
}
