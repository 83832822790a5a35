// A market's comments (newest first) and a form to post one. Bodies are text: they reach the
// page through textContent only, so markup in a comment shows as typed.
import { get, post } from '../api.js';
import { type Ctx, Notice } from '../context.js';
import { field, fill, h, panel, time } from '../dom.js';
import type { Comment, Market, Page } from '../types.js';

function commentItem(c: Comment): HTMLElement {
  const who = c.author.display_name ?? c.author.username;
  return h(
    'li',
    { class: 'comment', attrs: { 'data-comment-id': c.id } },
    h('div', { class: 'muted' }, h('strong', { text: who }), ` · ${time(c.created_at)}`),
    h('p', {
      class: 'comment-body',
      text: c.status === 'VISIBLE' && c.body !== null ? c.body : `(${c.status.toLowerCase()})`,
    }),
  );
}

export function commentsPanel(ctx: Ctx, market: Market): HTMLElement {
  const notice = new Notice();
  const list = h('ul', { class: 'comments', attrs: { 'aria-label': 'Comments' } });
  const body = h('textarea', { attrs: { name: 'body', rows: '3', maxlength: '2000' } });
  const form = h(
    'form',
    { attrs: { 'aria-label': 'Post a comment' } },
    field('Your comment', body),
    h('button', { text: 'Post comment', attrs: { type: 'submit' } }),
  );
  const refresh = async (): Promise<void> => {
    await notice.run(async () => {
      const page = await get<Page<Comment>>(`/markets/${market.id}/comments`, { limit: 50 });
      fill(list, ...page.data.map(commentItem));
      if (page.data.length === 0) list.append(h('li', { class: 'muted', text: 'No comments yet' }));
    });
  };
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    void notice
      .run(
        () => post<Comment>(`/markets/${market.id}/comments`, { body: body.value }),
        () => {
          body.value = '';
          return 'Comment posted';
        },
      )
      .then(refresh);
  });
  ctx.onResync(() => void refresh());
  void refresh();
  return panel('Comments', form, notice.el, list);
}
