import type { Logger } from "./logger.js";

/**
 * Runs `shutdown` once on the first SIGTERM or SIGINT and exits: 0 when it finished within
 * `graceMs`, 1 when it failed or ran out of time.
 */
export function exitOnSignal(logger: Logger, graceMs: number, shutdown: () => Promise<void>): void {
  let started = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (started) return;
    started = true;
    logger.info({ signal, graceMs }, "shutting down");
    const timer = setTimeout(() => {
      logger.error("shutdown grace period exceeded");
      process.exit(1);
    }, graceMs + 1_000);
    timer.unref();
    shutdown().then(
      () => {
        logger.info("stopped");
        process.exit(0);
      },
      (err: unknown) => {
        logger.error({ err }, "shutdown failed");
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
}

/** Counts requests in flight so a server can wait for them before it closes. */
export function createInFlight() {
  let count = 0;
  let waiters: Array<() => void> = [];
  return {
    enter() {
      count++;
    },
    leave() {
      count--;
      if (count === 0) {
        for (const w of waiters) w();
        waiters = [];
      }
    },
    get count() {
      return count;
    },
    /** Resolves when nothing is in flight, or after `timeoutMs`. */
    async idle(timeoutMs: number): Promise<void> {
      if (count === 0) return;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, timeoutMs);
        waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    },
  };
}

/**
 * Uncaught exceptions end the process (logged first), except the deferred "received GOAWAY without
 * any open streams" error that @connectrpc/connect-node's Http2SessionManager can leak when a peer
 * restarts (connectrpc/connect-es#1768, fix pending upstream in #1769): that connection is already
 * discarded and the next call reconnects, so it is only logged.
 */
export function guardUncaughtExceptions(logger: Logger): void {
  process.on("uncaughtException", (err) => {
    if (err instanceof Error && err.message.includes("received GOAWAY without any open streams")) {
      logger.warn({ err }, "ignored a deferred HTTP/2 GOAWAY error of a discarded connection");
      return;
    }
    logger.fatal({ err }, "uncaught exception");
    // A process that dies says why even when its logs are off (LOG_LEVEL=silent).
    if (!logger.isLevelEnabled("fatal"))
      process.stderr.write(`uncaught exception: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  });
}

/** Resolves after `ms`, or early when `signal` aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}

/**
 * A start-up step that replicas starting together may race on (creating the same JetStream
 * stream or consumer at once): tried again a few times, 100 ms then doubling, before the error
 * fails the start-up.
 */
export async function retryStartupStep<T>(
  logger: Logger,
  what: string,
  step: () => Promise<T>,
  attempts = 5,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await step();
    } catch (err) {
      if (attempt >= attempts) throw err;
      logger.warn({ err, attempt }, `${what} failed at start-up; trying again`);
      await new Promise((resolve) => setTimeout(resolve, 100 * 2 ** (attempt - 1)));
    }
  }
}
