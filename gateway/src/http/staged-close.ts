import type { Socket } from "node:net";
import type { GatewayApp } from "./gateway-app.js";

/** How long, and how many bytes, a connection answered before its body was read keeps reading. */
export const LINGER_MS = 5_000;
export const LINGER_BYTES = 64 * 1024 * 1024;

/**
 * A request answered before its body was read (413, or refused before parsing) is closed in stages
 * (RFC 9112 §9.6): the answer goes with `Connection: close`, then our side of the connection is
 * closed (half-close) while what the client still sends is read and discarded, for `LINGER_MS` or
 * `LINGER_BYTES` at most. Closed at once, the client's unsent data would reset the connection and
 * the client would see EPIPE/ECONNRESET instead of the answer (an OTLP exporter then retries).
 */
export function registerStagedClose(app: GatewayApp): void {
  app.addHook("onSend", async (request, reply) => {
    const raw = request.raw;
    if (raw.complete || !hasBody(raw.headers)) return;
    reply.header("connection", "close");
    if (raw.socket) lingerOnClose(raw.socket);
  });
}

const hasBody = (headers: Record<string, string | string[] | undefined>) =>
  headers["transfer-encoding"] !== undefined || Number(headers["content-length"] ?? 0) > 0;

/** Node's HTTP server closes a `Connection: close` connection with destroySoon: made gradual here. */
function lingerOnClose(socket: Socket): void {
  let lingering = false;
  socket.destroySoon = function destroyInStages(this: Socket) {
    if (lingering) return;
    lingering = true;
    this.end();
    let read = 0;
    const timer = setTimeout(() => this.destroy(), LINGER_MS);
    timer.unref();
    this.on("data", (chunk: Buffer) => {
      read += chunk.length;
      if (read > LINGER_BYTES) this.destroy();
    });
    this.once("end", () => this.destroy());
    this.once("close", () => clearTimeout(timer));
    this.resume();
  };
}
