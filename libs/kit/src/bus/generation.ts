/**
 * A change counter shared by every process on the bus: the last sequence of a stream of its own.
 * The catalog bumps it after each of its writes, before it answers; the execution service caches
 * what the catalog resolved together with the counter it read first, and uses an entry only while
 * the counter has not moved. So a run that starts after a publish has answered never runs what
 * was live before it, whichever replicas serve the two, and the warm path needs no catalog call.
 */
import { GENERATIONS } from "@kiln/contracts/bus-names";
import type { Logger } from "../logger.js";
import type { Bus, StreamSpec } from "./bus.js";

/** The stream of a change counter named in contracts' GENERATIONS. */
export function generationStream(names: { stream: string; subject: string }): StreamSpec {
  // Only the sequence matters: the messages themselves may go after a minute.
  return { name: names.stream, subjects: [names.subject], retention: "limits", maxAgeMs: 60_000 };
}

export const CATALOG_GENERATION: StreamSpec = generationStream(GENERATIONS.catalog);

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

export interface WatchedGeneration extends Generation {
  /** Stops listening for moves. */
  stop(): Promise<void>;
}

/**
 * `generation`, read from the bus only when it may have moved: every bump is heard on the
 * counter's subject (Bus.listen), and between two moves `current()` answers the value read last
 * without a bus call. A move heard during a read makes that read's value untrusted (it may be of
 * before the move). Until a read after the subscription answers, and `trustMs` after each read,
 * it reads again: a move missed while the connection was down is trusted at most that long.
 */
export function watchGeneration(
  bus: Bus,
  generation: Generation,
  spec: StreamSpec = CATALOG_GENERATION,
  trustMs = 1_000,
): WatchedGeneration {
  // Moves heard so far; a read is trusted only when none was heard while it was under way.
  let moves = 0;
  let known: { value: number; moves: number; readAtMs: number } | undefined;
  const subscription = bus.listen(spec.subjects[0] as string, () => {
    moves++;
  });

  function current(): Promise<number> {
    if (known && known.moves === moves && Date.now() - known.readAtMs < trustMs) return Promise.resolve(known.value);
    const before = moves;
    const readAtMs = Date.now();
    return generation.current().then((value) => {
      // Never backwards: a slower read of before a move does not replace one of after it.
      if (!known || value >= known.value) known = { value, moves: before, readAtMs };
      return value;
    });
  }

  return { current, bump: generation.bump, stop: () => subscription.stop() };
}
