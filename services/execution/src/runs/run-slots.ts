import { resourceExhausted } from "@kiln/kit/errors";

/**
 * A cap on the asynchronous agent runs one process runs at once (MAX_ASYNC_AGENT_RUNS): each holds
 * its steps' memory until it ends, so past the cap a new one is refused (`429` with Retry-After)
 * rather than queued. A slot is taken before the run is stored and given back once it ends.
 */
export function createRunSlots(max: number) {
  let taken = 0;
  /** Takes a slot, or throws `resource_exhausted`; the function returned gives it back (once). */
  const take = (): (() => void) => {
    if (taken >= max)
      throw resourceExhausted(`${taken} asynchronous agent runs are running in this process; retry shortly`);
    taken++;
    let given = false;
    return () => {
      if (given) return;
      given = true;
      taken--;
    };
  };
  return {
    /** Takes a slot for the run `store` stores, given back at once if storing fails. */
    async takeFor(store: () => Promise<void>): Promise<() => void> {
      const release = take();
      try {
        await store();
        return release;
      } catch (e) {
        release();
        throw e;
      }
    },
  };
}
