/** How the in-process bus lets go of messages: age, the de-duplication window, retention policy. */
import { type MemoryStream, type StoredMessage, storedBytes } from "./memory-bus-state.js";
import { filterMatches } from "./memory-subjects.js";

export function purgeMsgIds(stream: MemoryStream, now: number): void {
  for (const [id, { atMs }] of stream.msgIds) {
    if (atMs + stream.spec.duplicateWindowMs > now) break;
    stream.msgIds.delete(id);
  }
}

export function purgeExpired(stream: MemoryStream): void {
  const maxAgeMs = stream.spec.maxAgeMs;
  if (maxAgeMs === undefined) return;
  const now = Date.now();
  for (const m of stream.messages.values()) {
    if (m.storedAtMs + maxAgeMs > now) break;
    deleteMessage(stream, m);
  }
}

/** One timer per stream, set for the oldest message's expiry. */
export function scheduleExpiry(stream: MemoryStream, isClosed: () => boolean): void {
  clearTimeout(stream.expiryTimer);
  stream.expiryTimer = undefined;
  const maxAgeMs = stream.spec.maxAgeMs;
  const oldest = stream.messages.values().next();
  if (maxAgeMs === undefined || oldest.done || isClosed()) return;
  const dueInMs = Math.max(0, oldest.value.storedAtMs + maxAgeMs - Date.now());
  stream.expiryTimer = setTimeout(() => {
    purgeExpired(stream);
    scheduleExpiry(stream, isClosed);
  }, dueInMs).unref();
}

/** After an ack or term: drop the message if the retention policy says nobody needs it now. */
export function releaseMessage(stream: MemoryStream, seq: number): void {
  const m = stream.messages.get(seq);
  if (!m || stream.spec.retention === "limits") return;
  if (stream.spec.retention === "interest") {
    for (const c of stream.consumers.values()) {
      if (filterMatches(c, m.subject) && (seq >= c.cursor || c.pending.has(seq))) return;
    }
  }
  deleteMessage(stream, m);
}

/** Stores `m`, then drops the oldest messages while the stream holds more than its bytes (discard old). */
export function storeMessage(stream: MemoryStream, m: StoredMessage): void {
  stream.messages.set(m.seq, m);
  stream.bytes += storedBytes(m);
  for (const oldest of stream.messages.values()) {
    if (stream.bytes <= stream.maxBytes) break;
    deleteMessage(stream, oldest);
  }
}

function deleteMessage(stream: MemoryStream, m: StoredMessage): void {
  if (stream.messages.delete(m.seq)) stream.bytes -= storedBytes(m);
}

/** Stops a closed stream's expiry timer and its consumers' ack and nak timers. */
export function clearTimers(stream: MemoryStream): void {
  clearTimeout(stream.expiryTimer);
  for (const c of stream.consumers.values()) {
    for (const p of c.pending.values()) clearTimeout(p.timer);
  }
}
