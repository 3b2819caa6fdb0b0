/**
 * A local HTTP receiver of the audit stream (docs/governance.md "Streaming"): keeps every JSON body
 * it acknowledged with its path and headers, and answers `status()` (200 by default; a test sets
 * 503 for an outage).
 */
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface ReceivedRequest {
  path: string;
  headers: IncomingHttpHeaders;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: the bodies are read loosely and asserted on.
  body: any;
}

export async function startAuditReceiver() {
  const received: ReceivedRequest[] = [];
  let status = 200;
  let refused = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      if (status < 200 || status > 299) {
        refused++;
        res.writeHead(status).end();
        return;
      }
      received.push({ path: req.url ?? "", headers: req.headers, text, body: JSON.parse(text) });
      res.writeHead(status, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (path: string) => `http://127.0.0.1:${port}${path}`,
    received,
    /** What the receiver answers from now on. */
    answer(code: number) {
      status = code;
    },
    refused: () => refused,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export type AuditReceiver = Awaited<ReturnType<typeof startAuditReceiver>>;
