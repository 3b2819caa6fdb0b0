/** A message as the in-process bus hands it to a handler, settled once; its data and headers are its own copies. */
import type { StoredMessage } from "./memory-bus-state.js";
import type { SettleableMessage } from "./run-handler.js";
import { type Settlers, settledOnce } from "./settled-once.js";

export function memoryBusMessage(message: StoredMessage, deliveryCount: number, settlers: Settlers): SettleableMessage {
  const delivery = {
    subject: message.subject,
    data: message.data.slice(),
    headers: { ...message.headers },
    deliveryCount,
    redelivered: deliveryCount > 1,
    seq: message.seq,
  };
  return settledOnce(delivery, settlers);
}
