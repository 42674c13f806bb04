import type { Page } from '../domain/pagination';

/** Relay connection of a page; totalCount is computed only when a client selects it. */
export interface ConnectionSource<T> {
  readonly edges: { cursor: string; node: T }[];
  readonly pageInfo: PageInfoSource;
  readonly count: () => Promise<number>;
  /** True when `count` stopped at a cap and more exist. */
  readonly countIsLowerBound: () => Promise<boolean>;
}

export interface PageInfoSource {
  readonly hasNextPage: boolean;
  readonly hasPreviousPage: boolean;
  readonly startCursor: string | null;
  readonly endCursor: string | null;
}

/** Cursors are getters: encoding one costs more than the rest of an edge, and most list views select none. */
export function toConnection<T>(
  page: Page<T>,
  count: () => Promise<number>,
  countIsLowerBound: () => Promise<boolean> = () => Promise.resolve(false),
): ConnectionSource<T> {
  const edges = page.items.map((node) => ({
    node,
    get cursor() {
      return page.cursorOf(node);
    },
  }));
  const first = page.items.at(0);
  const last = page.items.at(-1);
  return {
    edges,
    pageInfo: {
      hasNextPage: page.hasNextPage,
      hasPreviousPage: page.hasPreviousPage ?? false,
      get startCursor() {
        return first === undefined ? null : page.cursorOf(first);
      },
      get endCursor() {
        return last === undefined ? null : page.cursorOf(last);
      },
    },
    count,
    countIsLowerBound,
  };
}
