import type { EngineEvent, OrderSnapshot } from '../../engine/index.js';

interface Entry {
  accountId: string;
  tag: string | null;
  clientKey: string | null;
}

/**
 * Open orders by API key, for the service's own rules: client_order_id is unique per key among
 * open orders, and each key has a cap on open orders. Kept in step with committed events.
 */
export class OpenOrderIndex {
  private readonly byId = new Map<string, Entry>();
  private readonly byClientKey = new Map<string, string>();
  private readonly countByTag = new Map<string, number>();

  static clientKey(tag: string | null, clientOrderId: string | null): string | null {
    return tag === null || clientOrderId === null ? null : `${tag}\u0000${clientOrderId}`;
  }

  orderForClientId(tag: string | null, clientOrderId: string): string | undefined {
    const k = OpenOrderIndex.clientKey(tag, clientOrderId);
    return k === null ? undefined : this.byClientKey.get(k);
  }

  openCount(tag: string): number {
    return this.countByTag.get(tag) ?? 0;
  }

  add(o: Pick<OrderSnapshot, 'id' | 'accountId' | 'tag' | 'clientOrderId'>): void {
    if (this.byId.has(o.id)) return;
    const clientKey = OpenOrderIndex.clientKey(o.tag, o.clientOrderId);
    this.byId.set(o.id, { accountId: o.accountId, tag: o.tag, clientKey });
    if (clientKey !== null) this.byClientKey.set(clientKey, o.id);
    if (o.tag !== null) this.countByTag.set(o.tag, (this.countByTag.get(o.tag) ?? 0) + 1);
  }

  remove(orderId: string): void {
    const e = this.byId.get(orderId);
    if (e === undefined) return;
    this.byId.delete(orderId);
    if (e.clientKey !== null && this.byClientKey.get(e.clientKey) === orderId)
      this.byClientKey.delete(e.clientKey);
    if (e.tag !== null) {
      const n = (this.countByTag.get(e.tag) ?? 1) - 1;
      if (n <= 0) this.countByTag.delete(e.tag);
      else this.countByTag.set(e.tag, n);
    }
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
