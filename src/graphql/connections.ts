import type { Page } from '../domain/pagination';

/** Relay connection of a page; totalCount is computed only when a client selects it. */
export interface ConnectionSource<T> {
  readonly edges: { cursor: string; node: T }[];
  readonly pageInfo: { hasNextPage: boolean; endCursor: string | null };
  readonly count: () => Promise<number>;
}

/** Cursors are getters: encoding one costs more than the rest of an edge, and most list views select none. */
export function toConnection<T>(page: Page<T>, count: () => Promise<number>): ConnectionSource<T> {
  const edges = page.items.map((node) => ({
    node,
    get cursor() {
      return page.cursorOf(node);
    },
  }));
  const last = page.items.at(-1);
  return {
    edges,
    pageInfo: {
      hasNextPage: page.hasNextPage,
      get endCursor() {
        return last === undefined ? null : page.cursorOf(last);
      },
    },
    count,
  };
}
