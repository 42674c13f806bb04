import type { Page } from '../domain/pagination';

/** Relay connection of a page; totalCount is computed only when a client selects it. */
export interface ConnectionSource<T> {
  readonly edges: { cursor: string; node: T }[];
  readonly pageInfo: { hasNextPage: boolean; endCursor: string | null };
  readonly count: () => Promise<number>;
}

export function toConnection<T>(page: Page<T>, count: () => Promise<number>): ConnectionSource<T> {
  const edges = page.items.map((node, i) => ({ node, cursor: page.cursors[i] as string }));
  return {
    edges,
    pageInfo: { hasNextPage: page.hasNextPage, endCursor: edges.at(-1)?.cursor ?? null },
    count,
  };
}
