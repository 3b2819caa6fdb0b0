/** A JetStream message as the NATS bus hands it to a handler, settled once. */
import type { JsMsg } from "@nats-io/jetstream";
import type { MsgHdrs } from "@nats-io/transport-node";
import type { SettleableMessage } from "./run-handler.js";

export class NatsBusMessage implements SettleableMessage {
  readonly subject: string;
  readonly data: Uint8Array;
  readonly headers: Record<string, string>;
  readonly deliveryCount: number;
  readonly redelivered: boolean;
  readonly seq: number;
  #settled = false;

  constructor(
    private readonly msg: JsMsg,
    subject: string,
  ) {
    this.subject = subject;
    this.data = msg.data;
    this.headers = headersToRecord(msg.headers);
    this.deliveryCount = msg.info.deliveryCount;
    this.redelivered = msg.redelivered;
    this.seq = msg.seq;
  }

  get settled(): boolean {
    return this.#settled;
  }

  json<T = unknown>(): T {
    return this.msg.json<T>();
  }

  string(): string {
    return this.msg.string();
  }

  async ack(): Promise<void> {
    if (!this.settle()) return;
    await this.msg.ackAck();
  }

  nak(delayMs?: number): void {
    if (this.settle()) this.msg.nak(delayMs);
  }

  term(): void {
    if (this.settle()) this.msg.term();
  }

  working(): void {
    if (!this.#settled) this.msg.working();
  }

  private settle(): boolean {
    if (this.#settled) return false;
    this.#settled = true;
    return true;
  }
}

/** First value of each header; JetStream's own `Nats-*` headers (e.g. Nats-Msg-Id) are left out. */
function headersToRecord(hdrs: MsgHdrs | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of hdrs?.keys() ?? []) {
    if (!key.toLowerCase().startsWith("nats-")) out[key] = hdrs?.get(key) ?? "";
  }
  return out;
}
