import type { ServerNotification } from "@modelcontextprotocol/sdk/types.js";

/** How often a call whose client sent a progress token hears that its run is still going (docs/mcp.md). */
export const PROGRESS_INTERVAL_MS = 2_000;

/**
 * Progress heartbeats for a long tools/call: the execution service answers a run only when it is
 * done (it reports no steps while running), so this says how long the run has been going, with no
 * `total` (unknown). It lets a client that resets its timeout on progress wait for a long agent.
 */
export function progressHeartbeat(
  progressToken: string | number | undefined,
  send: (notification: ServerNotification) => Promise<void>,
): { stop(): void } {
  if (progressToken === undefined) return { stop: () => undefined };
  const started = Date.now();
  const timer = setInterval(() => {
    const seconds = Math.round((Date.now() - started) / 100) / 10;
    send({
      method: "notifications/progress",
      params: { progressToken, progress: seconds, message: `the run has been going for ${seconds} s` },
    }).catch(() => undefined);
  }, PROGRESS_INTERVAL_MS);
  return { stop: () => clearInterval(timer) };
}
