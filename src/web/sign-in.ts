import { clear, h } from './dom';
import { tokenProblem } from './token';

/** The sign-in form: a pasted token, checked for shape and expiry before it is used. */
export function showSignIn(main: HTMLElement, message: string | null, signIn: (token: string) => void): void {
  // No `name`: the field is never part of a form submission (the CSP forbids those anyway).
  const input = h('textarea', {
    id: 'token-input',
    rows: 4,
    required: true,
    autocomplete: 'off',
    spellcheck: 'false',
    'aria-describedby': 'token-help',
  });
  const alert = h('p', { class: 'error', role: 'alert', id: 'sign-in-message' }, message ?? '');
  const form = h(
    'form',
    {
      class: 'sign-in',
      method: 'post',
      onsubmit: (event: Event) => {
        event.preventDefault();
        const token = input.value.trim().replace(/^Bearer\s+/i, '');
        const problem = tokenProblem(token, Date.now());
        if (problem) {
          alert.textContent = problem;
          input.focus();
          return;
        }
        signIn(token);
      },
    },
    h('label', { for: 'token-input' }, 'Bearer token'),
    input,
    h('button', { type: 'submit' }, 'Sign in'),
  );
  clear(
    main,
    h(
      'section',
      { class: 'card narrow', 'aria-labelledby': 'sign-in-title' },
      h('h1', { id: 'sign-in-title' }, 'Sign in'),
      h(
        'p',
        { id: 'token-help' },
        'Paste the bearer token the gateway issued you. It stays in this browser tab only, and never in an address.',
      ),
      alert,
      form,
      h(
        'details',
        {},
        h('summary', {}, 'Where do I get a token?'),
        h('p', {}, 'On a development gateway (no JWT_SECRET set), from its folder:'),
        h('pre', {}, 'npm run token -- --user user-1 --org acme --admin'),
      ),
    ),
  );
  input.focus();
}
