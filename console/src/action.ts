import { useCallback, useState } from "react";
import { errorOf, type ShownError } from "./api.js";

/** Runs an action, showing what the API said if it fails. */
export type Act = (what: () => Promise<void>) => Promise<void>;

/** The error a page shows, and `act`, which clears it, runs an action and keeps what the API said if it fails. */
export function useAction(): { error: ShownError | null; setError: (error: ShownError | null) => void; act: Act } {
  const [error, setError] = useState<ShownError | null>(null);
  const act = useCallback<Act>(async (what) => {
    setError(null);
    try {
      await what();
    } catch (err) {
      setError(errorOf(err));
    }
  }, []);
  return { error, setError, act };
}
