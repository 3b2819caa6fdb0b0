/** What the bus contract's sections share: the bus under test, its streams, and timing helpers. */
import type { Bus, Retention, StreamSpec } from "@kiln/kit/bus";

/** The bus under test, made afresh by the suite's beforeEach. */
export interface BusUnderTest {
  readonly bus: Bus;
  /** A fresh stream that owns `<name>.>`. */
  createStream(retention?: Retention, extra?: Partial<StreamSpec>): Promise<string>;
  /** How many messages `stream` holds. */
  storedCount(stream: string): Promise<number>;
}

export const POLL = { timeout: 3_000, interval: 20 };
let streamCounter = 0;

export function uniqueStreamName(): string {
  return `T${Date.now()}_${++streamCounter}`;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve = () => {};
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}
