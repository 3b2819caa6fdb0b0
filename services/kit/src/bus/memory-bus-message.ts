/** A message as the in-process bus hands it to a handler, settled once. */
import type { StoredMessage } from "./memory-bus-state.js";
import type { SettleableMessage } from "./run-handler.js";

export interface Settlers {
  ack(): void;
  nak(delayMs?: number): void;
  term(): void;
  working(): void;
}

export class MemoryBusMessage implements SettleableMessage {
  readonly subject: string;
  readonly data: Uint8Array;
  readonly headers: Record<string, string>;
  readonly redelivered: boolean;
  readonly seq: number;
  #settled = false;
  readonly #settlers: Settlers;

  constructor(
    message: StoredMessage,
    readonly deliveryCount: number,
    settlers: Settlers,
  ) {
    this.subject = message.subject;
    this.data = message.data.slice();
    this.headers = { ...message.headers };
    this.redelivered = deliveryCount > 1;
    this.seq = message.seq;
    this.#settlers = settlers;
  }

  get settled(): boolean {
    return this.#settled;
  }

  json<T = unknown>(): T {
    return JSON.parse(this.string()) as T;
  }

  string(): string {
    return new TextDecoder().decode(this.data);
  }

  async ack(): Promise<void> {
    if (this.settle()) this.#settlers.ack();
  }

  nak(delayMs?: number): void {
    if (this.settle()) this.#settlers.nak(delayMs);
  }

  term(): void {
    if (this.settle()) this.#settlers.term();
  }

  working(): void {
    if (!this.#settled) this.#settlers.working();
  }

  private settle(): boolean {
    if (this.#settled) return false;
    this.#settled = true;
    return true;
  }
}
