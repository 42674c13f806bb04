import { clear, h } from './dom';
import { tokenProblem } from './token';

/** How the user may sign in: through the identity provider, by pasting a token (development), or both. */
export interface SignInWays {
  readonly provider: (() => void) | null;
  readonly paste: ((token: string) => void) | null;
}

/** The sign-in page: a button to the identity provider, and/or a pasted token checked for shape and expiry before it is used. */
export function showSignIn(main: HTMLElement, message: string | null, ways: SignInWays): void {
  const alert = h('p', { class: 'error', role: 'alert', id: 'sign-in-message' }, message ?? '');
  const provider = ways.provider;
  const button = provider
    ? h('button', { type: 'button', id: 'provider-sign-in', onclick: () => provider() }, 'Sign in with your organisation')
    : null;
  const paste = ways.paste ? pasteForm(ways.paste, alert) : [];
  clear(main, h('section', { class: 'card narrow', 'aria-labelledby': 'sign-in-title' }, h('h1', { id: 'sign-in-title' }, 'Sign in'), alert, button, ...paste));
  (button ?? main.querySelector<HTMLElement>('#token-input'))?.focus();
}

function pasteForm(signIn: (token: string) => void, alert: HTMLElement): HTMLElement[] {
  // No `name`: the field is never part of a form submission (the CSP forbids those anyway).
  const input = h('textarea', {
    id: 'token-input',
    rows: 4,
    required: true,
    autocomplete: 'off',
    spellcheck: 'false',
    'aria-describedby': 'token-help',
  });
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
  return [
    h('p', { id: 'token-help' }, 'Paste the bearer token the gateway issued you. It stays in this browser tab only, and never in an address.'),
    form,
    h(
      'details',
      {},
      h('summary', {}, 'Where do I get a token?'),
      h('p', {}, 'On a development gateway (no JWT_SECRET set), from its folder:'),
      h('pre', {}, 'npm run token -- --user user-1 --org acme --admin'),
    ),
  ];
}
