/** The dashboard's pages, addressed by the URL fragment so the gateway serves one file for all. */
export type Route =
  | { readonly page: 'sessions' }
  | { readonly page: 'session'; readonly sessionId: string }
  | { readonly page: 'usage' }
  | { readonly page: 'webhooks' };

export function parseRoute(hash: string): Route {
  const path = hash.replace(/^#\/?/, '');
  const [first, second] = path.split('/');
  if (first === 'usage') return { page: 'usage' };
  if (first === 'webhooks') return { page: 'webhooks' };
  if (first === 'sessions' && second) return { page: 'session', sessionId: decodeURIComponent(second) };
  return { page: 'sessions' };
}

export function hrefOf(route: Route): string {
  switch (route.page) {
    case 'sessions':
      return '#/sessions';
    case 'session':
      return `#/sessions/${encodeURIComponent(route.sessionId)}`;
    case 'usage':
      return '#/usage';
    case 'webhooks':
      return '#/webhooks';
  }
}
