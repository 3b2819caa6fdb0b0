/** How the NATS bus reports a lost connection, and its time limits on server calls. */
import {
  ClosedConnectionError,
  ConnectionError,
  DrainingConnectionError,
  NoRespondersError,
  TimeoutError,
} from "@nats-io/transport-node";
import { BusUnavailableError } from "./bus.js";

/** A failure of the connection (anywhere in the cause chain) as BusUnavailableError; anything else as it is. */
export function busErrorOf(error: unknown): unknown {
  for (let e: unknown = error; e instanceof Error; e = e.cause) {
    if (
      e instanceof ClosedConnectionError ||
      e instanceof DrainingConnectionError ||
      e instanceof ConnectionError ||
      e instanceof TimeoutError ||
      e instanceof NoRespondersError
    ) {
      return new BusUnavailableError(error);
    }
  }
  return error;
}

export async function withTimeout<T>(promise: Promise<T>, timeoutMs: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), timeoutMs);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** A promise that rejects (unhandled rejections muted) once `fail` is called. */
export function disconnectSignal(): { promise: Promise<never>; fail: () => void } {
  let fail = () => {};
  const promise = new Promise<never>((_, reject) => {
    fail = () => reject(new BusUnavailableError(new Error("nats: disconnected")));
  });
  promise.catch(() => undefined);
  return { promise, fail };
}
