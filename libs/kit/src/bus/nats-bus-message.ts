/** A JetStream message as the NATS bus hands it to a handler, settled once. */
import type { JsMsg } from "@nats-io/jetstream";
import type { MsgHdrs } from "@nats-io/transport-node";
import type { SettleableMessage } from "./run-handler.js";
import { settledOnce } from "./settled-once.js";

/** `subject` is the message's subject without the platform's prefix. */
export function natsBusMessage(msg: JsMsg, subject: string): SettleableMessage {
  const delivery = {
    subject,
    data: msg.data,
    headers: headersToRecord(msg.headers),
    deliveryCount: msg.info.deliveryCount,
    redelivered: msg.redelivered,
    seq: msg.seq,
  };
  return settledOnce(delivery, {
    ack: async () => {
      await msg.ackAck();
    },
    nak: (delayMs) => msg.nak(delayMs),
    term: () => msg.term(),
    working: () => msg.working(),
  });
}

/** First value of each header; JetStream's own `Nats-*` headers (e.g. Nats-Msg-Id) are left out. */
function headersToRecord(hdrs: MsgHdrs | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of hdrs?.keys() ?? []) {
    if (!key.toLowerCase().startsWith("nats-")) out[key] = hdrs?.get(key) ?? "";
  }
  return out;
}
