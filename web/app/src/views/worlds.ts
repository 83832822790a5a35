// The world switcher: the user's ephemeral worlds (GET /sandbox/worlds), creating one (seed, TTL),
// moving the tab into one this tab created (its key is shown once, so only this tab holds it),
// back to the shared paper world, and deleting one. Worlds are managed with the tab's own key.
import { request } from '../api.js';
import { type Ctx, Notice } from '../context.js';
import { button, field, fill, h, input, panel, time } from '../dom.js';
import { forgetWorld, rememberWorld, storedKey, tabWorlds } from '../session.js';
import type { Page } from '../types.js';

interface World {
  id: string;
  name: string | null;
  seed: number;
  expires_at: string;
  created_at: string;
}

export function worldsView(ctx: Ctx, root: HTMLElement): void {
  const tabKey = storedKey()!;
  const call = <T>(method: string, path: string, body?: unknown): Promise<T> =>
    request<T>(method, path, { key: tabKey, body });
  const notice = new Notice();
  const list = h('ul', { class: 'worlds', attrs: { 'aria-label': 'Your worlds' } });

  const name = input('name', { maxlength: '100', placeholder: 'ci' });
  const seed = input('seed', { type: 'number', step: '1', min: '0', inputmode: 'numeric' });
  const ttl = input('ttl_seconds', {
    type: 'number',
    step: '1',
    min: '60',
    max: '86400',
    value: '3600',
    inputmode: 'numeric',
  });
  const form = h(
    'form',
    { class: 'row', attrs: { 'aria-label': 'Create a world' } },
    field('World name', name),
    field('Seed', seed),
    field('Lifetime (s)', ttl),
    h('button', { text: 'Create world', attrs: { type: 'submit' } }),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const body: Record<string, unknown> = { ttl_seconds: Number(ttl.value) };
    if (name.value.trim() !== '') body.name = name.value.trim();
    if (seed.value !== '') body.seed = Number(seed.value);
    void notice.run(
      async () => {
        const w = await call<World & { key: string }>('POST', '/sandbox/worlds', body);
        rememberWorld({ id: w.id, name: w.name, key: w.key });
        await refresh();
        return w;
      },
      (w) => `Created world ${w.name ?? w.id} (seed ${w.seed})`,
    );
  });

  const row = (w: World): HTMLElement => {
    const held = tabWorlds()[w.id] !== undefined;
    const active = ctx.world?.id === w.id;
    return h(
      'li',
      {
        class: active ? 'world active' : 'world',
        attrs: { 'data-world-id': w.id, 'aria-label': w.name ?? w.id },
      },
      h('strong', { text: w.name ?? w.id }),
      h('span', {
        class: 'muted',
        text: ` ${w.id} · seed ${w.seed} · expires ${time(w.expires_at)}`,
      }),
      active
        ? h('span', { class: 'tag', text: 'Active' })
        : held
          ? button('Switch to this world', () => ctx.switchWorld(w.id))
          : h('span', { class: 'muted', text: ' (its key is in the tab that created it)' }),
      button('Delete world', () => {
        void notice.run(
          async () => {
            await call<void>('DELETE', `/sandbox/worlds/${encodeURIComponent(w.id)}`);
            forgetWorld(w.id);
            // The tab was in it: its key is revoked, so the tab goes back to the paper world.
            if (active) ctx.switchWorld(null);
            else await refresh();
          },
          () => `Deleted world ${w.name ?? w.id}`,
        );
      }),
    );
  };

  async function refresh(): Promise<void> {
    const page = await call<Page<World>>('GET', '/sandbox/worlds?limit=200');
    if (!ctx.alive()) return;
    if (page.data.length === 0) fill(list, h('li', { class: 'muted', text: 'No worlds' }));
    else fill(list, ...page.data.map(row));
  }

  fill(
    root,
    h('h1', { text: 'Worlds' }),
    panel(
      'Where this tab trades',
      h('p', {
        text:
          ctx.world === null
            ? 'This tab trades in the shared paper world.'
            : `This tab trades in world ${ctx.world.name ?? ctx.world.id}: its own books, house, clock and records.`,
      }),
      ...(ctx.world === null
        ? []
        : [button('Back to the shared paper world', () => ctx.switchWorld(null))]),
    ),
    panel('Your worlds', form, list, notice.el),
  );
  void notice.run(refresh);
}
