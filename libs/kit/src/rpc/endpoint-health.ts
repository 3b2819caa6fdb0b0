/**
 * Which replica endpoints of a network transport are up. An endpoint that refused a call (no
 * connection, a refused stream, a GOAWAY) is down: calls avoid it while another is up. It is
 * probed in the background, soon and then less often, and is back in rotation the moment a
 * connection to it opens. A fixed time out of rotation left a replica that was refused while it
 * was still starting without calls for that whole time, after it had come up.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { Logger } from "../logger.js";

export interface ProbedEndpoint {
  readonly url: string;
  /** Left the transport's list (its name no longer resolves to it): probing stops. */
  readonly removed: boolean;
  down: boolean;
  /** Opens a connection if none is open; true when one is. */
  connect(): Promise<boolean>;
}

export interface EndpointHealthOptions {
  logger?: Pick<Logger, "warn" | "info">;
  /** The first probe's delay after an endpoint went down; each next one doubles, up to `maxProbeMs`. Default 50. */
  firstProbeMs?: number;
  /** Default 2000: a replica that stays down costs one connection attempt per client every 2 s. */
  maxProbeMs?: number;
  /** A probe whose connection has not opened by then counts as failed (the attempt goes on). Default 2000. */
  connectTimeoutMs?: number;
}

export interface EndpointHealth {
  /** Takes the endpoint out of rotation (once, however many calls saw it refuse) and starts probing it. */
  markDown(endpoint: ProbedEndpoint, reason: unknown): void;
  /** Stops every probe. */
  close(): void;
}

export function createEndpointHealth(options: EndpointHealthOptions = {}): EndpointHealth {
  const firstProbeMs = options.firstProbeMs ?? 50;
  const maxProbeMs = options.maxProbeMs ?? 2_000;
  const connectTimeoutMs = options.connectTimeoutMs ?? 2_000;
  let closed = false;

  async function opens(endpoint: ProbedEndpoint): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), connectTimeoutMs);
      timer.unref();
    });
    try {
      return await Promise.race([endpoint.connect().catch(() => false), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  async function probe(endpoint: ProbedEndpoint): Promise<void> {
    for (let delay = firstProbeMs; ; delay = Math.min(delay * 2, maxProbeMs)) {
      // Unreferenced: a probe never keeps a process alive.
      await sleep(delay, undefined, { ref: false });
      if (closed || endpoint.removed) return;
      if (await opens(endpoint)) {
        endpoint.down = false;
        options.logger?.info({ endpoint: endpoint.url }, "endpoint back");
        return;
      }
    }
  }

  return {
    markDown(endpoint, reason) {
      if (endpoint.down || closed) return;
      endpoint.down = true;
      options.logger?.warn({ endpoint: endpoint.url, reason: reasonOf(reason) }, "endpoint down");
      void probe(endpoint);
    },
    close() {
      closed = true;
    },
  };
}

function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
