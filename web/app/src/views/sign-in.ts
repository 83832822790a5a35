// Sign in with email and password: a session mints the tab's test key (session.ts).
import { Notice } from '../context.js';
import { field, fill, h, input } from '../dom.js';
import { signIn } from '../session.js';
import type { Me } from '../types.js';

export function signInView(root: HTMLElement, done: (me: Me) => void, reason?: string): void {
  const notice = new Notice();
  if (reason !== undefined) notice.info(reason);
  const email = input('email', { type: 'email', autocomplete: 'username', required: '' });
  const password = input('password', {
    type: 'password',
    autocomplete: 'current-password',
    required: '',
  });
  const submit = h('button', { text: 'Sign in', class: 'primary', attrs: { type: 'submit' } });
  const form = h(
    'form',
    { class: 'sign-in panel', attrs: { 'aria-label': 'Sign in' } },
    h('h1', { text: 'Sign in' }),
    h('p', {
      class: 'muted',
      text: 'Paper trading on the test engine. Signing in creates a test key for this tab; no live key is ever used here.',
    }),
    field('Email', email),
    field('Password', password),
    submit,
    notice.el,
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    submit.disabled = true;
    void notice
      .run(() => signIn(email.value, password.value))
      .then((me) => {
        submit.disabled = false;
        if (me !== undefined) done(me);
      });
  });
  fill(root, form);
  email.focus();
}
