import type { Listener, Subscription } from "./bus.js";
import { subjectMatches } from "./memory-subjects.js";

/** The in-process bus's `listen`: each listener whose subject matches gets a published message, from a microtask. */
export function createMemoryListeners() {
  const listeners = new Set<{ subject: string; listener: Listener }>();
  return {
    listen(subject: string, listener: Listener): Subscription {
      const entry = { subject, listener };
      listeners.add(entry);
      return {
        async stop() {
          listeners.delete(entry);
        },
      };
    },
    notify(subject: string, data: Uint8Array): void {
      for (const entry of listeners) {
        if (subjectMatches(entry.subject, subject)) queueMicrotask(() => entry.listener(subject, data));
      }
    },
    clear(): void {
      listeners.clear();
    },
  };
}
