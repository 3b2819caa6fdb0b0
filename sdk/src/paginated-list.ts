/** One page of a list: `{ data, nextCursor }` (api.md "Conventions"); nextCursor is null on the last. */
export interface Page<T> {
  data: T[];
  nextCursor: string | null;
}

/**
 * A list call: `await` it for the first page, or iterate it with `for await` for every item of
 * every page (each page fetched when the one before is used up).
 */
export class PaginatedList<T> implements PromiseLike<Page<T>>, AsyncIterable<T> {
  #first: Promise<Page<T>> | undefined;

  constructor(
    private readonly fetchPage: (cursor: string | undefined) => Promise<Page<T>>,
    private readonly cursor?: string,
  ) {}

  // biome-ignore lint/suspicious/noThenProperty: awaiting the list answers its first page, on purpose.
  then<A = Page<T>, B = never>(
    onFulfilled?: ((page: Page<T>) => A | PromiseLike<A>) | null,
    onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    return this.#firstPage().then(onFulfilled, onRejected);
  }

  #firstPage(): Promise<Page<T>> {
    this.#first ??= this.fetchPage(this.cursor);
    return this.#first;
  }

  /** Every page, in order. */
  async *pages(): AsyncGenerator<Page<T>> {
    let page = await this.#firstPage();
    yield page;
    while (page.nextCursor !== null) {
      page = await this.fetchPage(page.nextCursor);
      yield page;
    }
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T> {
    for await (const page of this.pages()) yield* page.data;
  }
}

/** The query of a list route as the SDK takes it: `limit` as a number (1–200). */
export type ListQuery<Q extends { limit?: string; cursor?: string }> = Omit<Q, "limit"> & { limit?: number };

/** The query of one page: the caller's (if any), with `limit` as the wire's digits and the page's cursor. */
export function pageQuery<Q extends { limit?: string; cursor?: string }>(
  query: ListQuery<Q> | undefined,
  cursor: string | undefined,
): Q {
  const { limit, ...rest } = query ?? { limit: undefined };
  return {
    ...rest,
    ...(limit === undefined ? {} : { limit: String(limit) }),
    ...(cursor === undefined ? {} : { cursor }),
  } as Q;
}
