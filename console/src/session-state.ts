/**
 * State kept in the tab's sessionStorage under `key`: it survives navigating to another page and
 * back, and a reload, and goes with the tab. A value that cannot be read back (another shape, the
 * storage full or refused) falls back to `initial`; `clear` forgets it.
 */
import { useCallback, useState } from "react";

/** The value kept under `key` and whether there was one (else `initial`): one read of the storage. */
const read = <T>(key: string, initial: T): { value: T; stored: boolean } => {
  try {
    const text = sessionStorage.getItem(key);
    return text === null ? { value: initial, stored: false } : { value: JSON.parse(text) as T, stored: true };
  } catch {
    return { value: initial, stored: false };
  }
};

export function useSessionState<T>(
  key: string,
  initial: T,
): [T, (next: T | ((previous: T) => T)) => void, () => void, boolean] {
  const [first] = useState(() => read(key, initial));
  const [value, setValue] = useState<T>(first.value);
  const set = useCallback(
    (next: T | ((previous: T) => T)) => {
      setValue((previous) => {
        const value = typeof next === "function" ? (next as (previous: T) => T)(previous) : next;
        try {
          sessionStorage.setItem(key, JSON.stringify(value));
        } catch {
          // Kept in memory only (storage full or refused).
        }
        return value;
      });
    },
    [key],
  );
  const clear = useCallback(() => {
    try {
      sessionStorage.removeItem(key);
    } catch {
      // Nothing stored.
    }
  }, [key]);
  // The last: the value came from an earlier visit (restored), not from `initial`.
  return [value, set, clear, first.stored];
}
