/**
 * A change counter shared by every process on the bus: the last sequence of a stream of its own.
 * The catalog bumps it after each of its writes, before it answers; the execution service caches
 * what the catalog resolved together with the counter it read first, and uses an entry only while
 * the counter has not moved. So a run that starts after a publish has answered never runs what
 * was live before it, whichever replicas serve the two, and the warm path needs no catalog call.
 */
import type { Logger } from "../logger.js";
import type { Bus, StreamSpec } from "./bus.js";

export const CATALOG_GENERATION: StreamSpec = {
  name: "CATALOG_GENERATION",
  subjects: ["catalog-generation"],
  retention: "limits",
  // Only the sequence matters: the messages themselves may go after a minute.
  maxAgeMs: 60_000,
};

export interface Generation {
  /**
   * The counter now; rejects when the bus does not answer (then nothing cached may be trusted).
   * Calls made in the same turn share one read, sent after the last of them: each sees every
   * move made before it was called.
   */
  current(): Promise<number>;
  /**
   * Moves the counter. Rejects when the bus refuses, and keeps trying in the background (every
   * second) until a bump goes through, so readers that trusted an old entry stop soon after the
   * bus is back.
   */
  bump(): Promise<void>;
}

export function createGeneration(bus: Bus, logger: Logger, spec: StreamSpec = CATALOG_GENERATION): Generation {
  const subject = spec.subjects[0] as string;
  let owed: NodeJS.Timeout | undefined;

  async function bump(): Promise<void> {
    try {
      await bus.publish(subject, "");
    } catch (err) {
      if (!owed) {
        logger.warn({ err }, "the catalog's change counter could not be moved; retrying every second");
        owed = setInterval(() => {
          bus.publish(subject, "").then(
            () => {
              clearInterval(owed);
              owed = undefined;
            },
            () => undefined,
          );
        }, 1_000);
        owed.unref();
      }
      throw err;
    }
  }

  // The read the calls of this turn wait for, until it is sent (then a later call starts another).
  let next: Promise<number> | undefined;
  function current(): Promise<number> {
    next ??= Promise.resolve().then(() => {
      next = undefined;
      return bus.streamInfo(spec.name).then((info) => info.lastSeq);
    });
    return next;
  }

  return { current, bump };
}
