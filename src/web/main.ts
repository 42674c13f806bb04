import { createGatewayClient, GatewayError, ViewerDocument, type ConnectionStatus } from '../../packages/client/src';
import type { App, Page } from './app';
import { clear, h } from './dom';
import { hrefOf, parseRoute, type Route } from './routes';
import { mountSessionPage } from './session-page';
import { mountSessionsPage } from './sessions-page';
import { beginProviderSignIn, completeProviderSignIn, isProviderCallback, isProviderToken, loadSignInSettings, signOutAtProvider, type SignInSettings } from './provider-sign-in';
import { showSignIn } from './sign-in';
import { hasTokenInFragment, readClaims, TOKEN_IN_ADDRESS, TOKEN_KEY, tokenProblem } from './token';
import { mountUsagePage } from './usage-page';
import { mountWebhooksPage } from './webhooks-page';

const main = document.getElementById('main') as HTMLElement;
const topbar = document.getElementById('topbar') as HTMLElement;
const brand = topbar.firstElementChild;

/** Read once per load: how this gateway lets the dashboard sign in. */
let settings: SignInSettings = { paste: true, provider: null };

void loadSignInSettings().then(async (loaded) => {
  settings = loaded;
  if (settings.provider && isProviderCallback()) {
    try {
      sessionStorage.setItem(TOKEN_KEY, await completeProviderSignIn(settings.provider));
    } catch (e) {
      return askForToken(`Signing in through the identity provider failed: ${(e as Error).message}`);
    }
  }
  boot();
});

/** Signs in with the token kept in the tab's storage, or asks for one. */
function boot(): void {
  const linked = dropTokenFromAddress();
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (!token) return askForToken(linked ? TOKEN_IN_ADDRESS : null);
  const problem = tokenProblem(token, Date.now());
  if (problem) {
    sessionStorage.removeItem(TOKEN_KEY);
    return askForToken(problem);
  }
  void start(token);
}

/**
 * A `#token=` address is taken out of the address bar at once and never used (it is in the
 * browser's history already); true when there was one.
 */
function dropTokenFromAddress(): boolean {
  if (!hasTokenInFragment(location.hash)) return false;
  history.replaceState(null, '', `${location.pathname}${location.search}#/sessions`);
  return true;
}

function askForToken(message: string | null): void {
  clear(topbar, brand);
  // A `#token=` link opened in this tab while it shows the form: say why it is not used.
  const onLink = () => {
    if (!dropTokenFromAddress()) return;
    window.removeEventListener('hashchange', onLink);
    askForToken(TOKEN_IN_ADDRESS);
  };
  window.addEventListener('hashchange', onLink);
  const provider = settings.provider;
  showSignIn(main, message, {
    provider: provider ? () => void toProvider(provider) : null,
    paste: settings.paste
      ? (token) => {
          window.removeEventListener('hashchange', onLink);
          sessionStorage.setItem(TOKEN_KEY, token);
          boot();
        }
      : null,
  });
}

/** Off to the identity provider's sign-in page; back on this page (`returnTo`) afterwards. */
async function toProvider(provider: NonNullable<SignInSettings['provider']>, returnTo = location.hash): Promise<void> {
  try {
    await beginProviderSignIn(provider, returnTo);
  } catch (e) {
    askForToken(`The identity provider could not be reached: ${(e as Error).message}`);
  }
}

async function start(token: string): Promise<void> {
  const client = createGatewayClient({ url: new URL('/graphql', location.href).toString(), token });
  let viewer;
  try {
    viewer = (await client.query(ViewerDocument)).me;
  } catch (e) {
    await client.dispose();
    if (e instanceof GatewayError && e.isUnauthenticated) {
      sessionStorage.removeItem(TOKEN_KEY);
      return askForToken('The gateway refused this token: it has expired or was not issued for this gateway. Get a new one with npm run token.');
    }
    clear(main, h('p', { class: 'error', role: 'alert' }, `The gateway could not be reached: ${(e as Error).message}`), h('button', { type: 'button', onclick: () => boot() }, 'Try again'));
    return;
  }

  let page: Page | null = null;
  const liveStatus = h('span', { class: 'live', role: 'status', hidden: true });
  let connection: ConnectionStatus = 'disconnected';
  const showLive = () => {
    liveStatus.hidden = !page?.live;
    liveStatus.dataset.state = connection;
    liveStatus.textContent = connection === 'connected' ? 'Live' : connection === 'connecting' ? 'Connecting…' : 'Reconnecting…';
  };
  client.onStatus((status) => {
    connection = status;
    showLive();
  });

  let ended = false;
  const fromProvider = isProviderToken(settings.provider, token);
  // A provider's token is renewed a minute before it expires by going through the provider again
  // (which answers at once while its own session lasts); the page comes back where it was.
  const expiresAt = tokenExpiry(token);
  const renewal =
    fromProvider && settings.provider && expiresAt !== null
      ? setTimeout(() => {
          const provider = settings.provider!;
          const returnTo = location.hash;
          if (end()) void toProvider(provider, returnTo);
        }, Math.max(0, expiresAt - Date.now() - 60_000))
      : undefined;
  /** Leaves this sign-in behind: pages, subscriptions, the stored token. Only once. */
  const end = (): boolean => {
    if (ended) return false;
    ended = true;
    clearTimeout(renewal);
    window.removeEventListener('hashchange', render);
    page?.dispose();
    page = null;
    void client.dispose();
    sessionStorage.removeItem(TOKEN_KEY);
    return true;
  };
  const app: App = {
    client,
    viewer,
    isAdmin: viewer.roles.includes('admin'),
    signOut(message) {
      if (!end()) return;
      // Chosen by the user: the provider's session ends too, when it offers an end-session endpoint.
      if (message === null && fromProvider && settings.provider) {
        void signOutAtProvider(settings.provider).then((left) => left || askForToken(null));
        return;
      }
      askForToken(message);
    },
    onError(error) {
      if (error.isUnauthenticated) app.signOut('Your token has expired or was refused. Sign in again with a new one.');
    },
  };

  const nav = (route: Route, label: string) => h('a', { href: hrefOf(route), 'data-page': route.page }, label);
  const links = [nav({ page: 'sessions' }, 'Sessions'), nav({ page: 'usage' }, 'Usage'), ...(app.isAdmin ? [nav({ page: 'webhooks' }, 'Webhooks')] : [])];
  clear(
    topbar,
    brand,
    h('nav', { 'aria-label': 'Pages' }, ...links),
    liveStatus,
    h(
      'span',
      { class: 'who' },
      h('span', { title: viewer.user.id }, viewer.user.text),
      h('span', { class: 'muted' }, ` · ${viewer.organization.text}`),
      app.isAdmin ? h('span', { class: 'badge' }, 'admin') : null,
    ),
    h('button', { type: 'button', class: 'quiet', onclick: () => app.signOut(null) }, 'Sign out'),
  );

  function render(): void {
    // A `#token=` link opened in this signed-in tab is not used; the tab stays signed in as it was.
    dropTokenFromAddress();
    const route = parseRoute(location.hash);
    for (const link of links) {
      const current = link.dataset.page === route.page || (route.page === 'session' && link.dataset.page === 'sessions');
      if (current) link.setAttribute('aria-current', 'page');
      else link.removeAttribute('aria-current');
    }
    page?.dispose();
    clear(main);
    page =
      route.page === 'usage'
        ? mountUsagePage(app, main)
        : route.page === 'webhooks'
          ? mountWebhooksPage(app, main)
          : route.page === 'session'
            ? mountSessionPage(app, main, route.sessionId)
            : mountSessionsPage(app, main);
    showLive();
    window.scrollTo(0, 0);
  }
  window.addEventListener('hashchange', render);
  render();
}

/** Milliseconds since the epoch when `token` expires, or null when it does not say. */
function tokenExpiry(token: string): number | null {
  const exp = readClaims(token)?.expiresAt;
  return exp === null || exp === undefined ? null : exp * 1000;
}
