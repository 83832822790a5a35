// What every view gets: the realtime feed, the signed-in user, navigation and a place for the
// clean-up of what it subscribed to.
import { describe } from './api.js';
import { h } from './dom.js';
import type { Realtime } from './realtime.js';
import type { TabWorld } from './session.js';
import type { Me } from './types.js';

export interface Ctx {
  rt: Realtime;
  me: Me;
  /** The ephemeral world the tab is in, or null for the shared paper world. */
  world: TabWorld | null;
  /** Moves the tab (REST and the feed) to one of its worlds, or back to the paper world (null). */
  switchWorld(id: string | null): void;
  navigate(path: string): void;
  /** False once the view was left (a view that awaited something checks it before drawing). */
  alive(): boolean;
  /** Runs when the view is left (unsubscribe, timers). */
  onLeave(fn: () => void): void;
  /** Runs after the feed reconnected: re-fetch what the view shows. Removed when it is left. */
  onResync(fn: () => void): void;
}

/** A live region for one panel's outcome: errors in the API's words, confirmations. */
export class Notice {
  readonly el = h('p', { class: 'notice', attrs: { role: 'status', 'aria-live': 'polite' } });

  error(err: unknown): void {
    this.el.className = 'notice error';
    this.el.setAttribute('role', 'alert');
    this.el.textContent = describe(err);
  }

  info(text: string): void {
    this.el.className = 'notice info';
    this.el.setAttribute('role', 'status');
    this.el.textContent = text;
  }

  clear(): void {
    this.el.className = 'notice';
    this.el.textContent = '';
  }

  /**
   * Runs background work (a load the feed asked for): its failure is shown in words, its success
   * leaves the notice as it is, so it never wipes the confirmation of what the user just did.
   */
  async quiet<T>(action: () => Promise<T>): Promise<T | undefined> {
    try {
      return await action();
    } catch (err) {
      this.error(err);
      return undefined;
    }
  }

  /** Runs an action, showing its failure in words; resolves to its result or undefined. */
  async run<T>(action: () => Promise<T>, done?: (r: T) => string | void): Promise<T | undefined> {
    try {
      const r = await action();
      const text = done?.(r);
      if (typeof text === 'string') this.info(text);
      else this.clear();
      return r;
    } catch (err) {
      this.error(err);
      return undefined;
    }
  }
}

/** Coalesces bursts (a batch's many events) into one refresh. */
export function debounce(fn: () => void, ms = 150): () => void {
  let t: number | undefined;
  return () => {
    window.clearTimeout(t);
    t = window.setTimeout(fn, ms);
  };
}
