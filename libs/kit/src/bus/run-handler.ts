/**
 * The settle-after-handler rule of bus.ts `MessageHandler`, shared by both backends so they
 * cannot drift apart.
 */
import type { BusMessage, ConsumeOptions, MessageHandler } from "./bus.js";

const DEFAULT_RETRY_DELAY_MS = 1000;

/** A delivery that knows whether ack, nak or term was already called on it. */
export interface SettleableMessage extends BusMessage {
  readonly settled: boolean;
}

/** Never rejects: failures go to `options.onError` or `report`, and the message is settled. */
export async function runHandler(
  msg: SettleableMessage,
  handler: MessageHandler,
  options: ConsumeOptions,
  report: (what: string, error: unknown) => void,
): Promise<void> {
  try {
    await handler(msg);
  } catch (error) {
    try {
      options.onError?.(error, msg);
    } catch (onErrorFailure) {
      report("onError threw", onErrorFailure);
    }
    if (!msg.settled) msg.nak(options.retryDelayMs ?? DEFAULT_RETRY_DELAY_MS);
    return;
  }
  if (msg.settled) return;
  try {
    await msg.ack();
  } catch (error) {
    // The message stays unacknowledged and is delivered again after ackWait.
    report("ack failed", error);
  }
}
