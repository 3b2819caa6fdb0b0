import { useCallback, useRef, useState } from "react";
import { errorOf, type ShownError } from "./api.js";

/** One page as the SDK's pagination yields it. */
type Pages<T> = AsyncGenerator<{ data: T[]; nextCursor: string | null }>;

/**
 * A list read page after page through the SDK's pagination: `start` begins again with new pages
 * (the items are null until the first page is read), `next` reads one more; a page from pages
 * since replaced is dropped.
 */
export function usePagedList<T>() {
  const [items, setItems] = useState<T[] | null>(null);
  const [more, setMore] = useState(false);
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<ShownError | null>(null);
  const pages = useRef<Pages<T> | null>(null);
  const next = useCallback(async () => {
    const it = pages.current;
    if (!it) return;
    setLoading(true);
    try {
      const page = await it.next();
      if (pages.current !== it) return;
      if (!page.done) setItems((rs) => [...(rs ?? []), ...page.value.data]);
      setMore(!page.done && page.value.nextCursor !== null);
    } catch (e) {
      setError(errorOf(e));
    } finally {
      setLoading(false);
    }
  }, []);
  const start = useCallback(
    (fresh: Pages<T>) => {
      setError(null);
      setItems(null);
      pages.current = fresh;
      void next();
    },
    [next],
  );
  return { items, more, loading, error, setError, start, next };
}

/**
 * The end of a paged list: how many are shown and in what order while more pages wait (with the
 * button that reads the next), or that they are all of them.
 */
export function ListEnd({
  list,
  noun,
  order,
  pageSize,
}: {
  /** What usePagedList gives: the items so far, whether more wait, and the way to read them. */
  list: { items: readonly unknown[] | null; more: boolean; loading: boolean; next: () => Promise<void> };
  noun: string;
  order: string;
  pageSize: number;
}) {
  const { more, loading, next } = list;
  const count = list.items?.length ?? 0;
  return (
    <p className="list-end" role="status" aria-live="polite">
      {count} {noun}
      {count === 1 ? "" : "s"} shown{more ? `, ${order} first.` : ": that is all of them."}{" "}
      {more && (
        <button type="button" className="secondary" onClick={() => void next()} disabled={loading}>
          {loading ? "Loading…" : `Load ${pageSize} more`}
        </button>
      )}
    </p>
  );
}
