/** A delivery as a bus backend hands it to a handler: settled at most once, whichever backend settles it. */
import type { Delivery } from "./bus.js";
import type { SettleableMessage } from "./run-handler.js";

/** How the backend settles one delivery. */
export interface Settlers {
  /** Resolves when the bus confirmed it. */
  ack(): void | Promise<void>;
  nak(delayMs?: number): void;
  term(): void;
  working(): void;
}

const decoder = new TextDecoder();

/** The first ack, nak or term settles the message; the ones after it, and `working` after it, do nothing. */
export function settledOnce(delivery: Delivery, settlers: Settlers): SettleableMessage {
  let settled = false;
  const settle = () => {
    if (settled) return false;
    settled = true;
    return true;
  };
  const string = () => decoder.decode(delivery.data);
  return {
    ...delivery,
    get settled() {
      return settled;
    },
    json: <T>() => JSON.parse(string()) as T,
    string,
    async ack() {
      if (settle()) await settlers.ack();
    },
    nak(delayMs) {
      if (settle()) settlers.nak(delayMs);
    },
    term() {
      if (settle()) settlers.term();
    },
    working() {
      if (!settled) settlers.working();
    },
  };
}
