/** The plumbing of the provider stubs (Anthropic, Gemini, Bedrock): a local server, bodies read and sent, a request log. */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createServer as createH2cServer } from "node:http2";
import { type AddressInfo, createServer as createTcpServer, type Socket } from "node:net";
import { Duplex, PassThrough } from "node:stream";

export interface StubRequest {
  method: string;
  /** The path without the query, decoded. */
  path: string;
  /** The path as sent (percent-encoded; a signature covers it so). */
  rawPath: string;
  query: Record<string, string>;
  /** Lower-case names. */
  headers: Record<string, string>;
  /** The parsed JSON body (the raw text when it was not JSON). */
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary fields of what was sent.
  body: any;
  /** The body as sent (a signature covers these bytes). */
  raw: Buffer;
  /** Milliseconds since the stub started, when the request arrived. */
  atMs: number;
}

/**
 * Starts a server on 127.0.0.1 with a free port, handing each request, read whole, to `handle`.
 * It speaks HTTP/1.1 and, on the same port, cleartext HTTP/2 (the AWS SDK's Bedrock client talks
 * HTTP/2), told apart by the HTTP/2 connection preface.
 */
export async function listenStub(
  handle: (request: StubRequest, res: ServerResponse) => Promise<void>,
): Promise<{ origin: string; now: () => number; close: () => Promise<void> }> {
  const started = performance.now();
  const now = () => performance.now() - started;
  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    void readRequest(req, now())
      .then((request) => handle(request, res))
      .catch(() => {
        if (!res.headersSent) sendJson(res, 500, { error: { code: 500, message: "stub failure", status: "INTERNAL" } });
      });
  };
  const h1 = createServer(onRequest);
  const h2 = createH2cServer(onRequest as never);
  const sockets = new Set<Socket>();
  const tcp = createTcpServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.once("data", (head: Buffer) => {
      if (head.subarray(0, 3).toString() === "PRI") {
        // An HTTP/2 session reads the socket's handle directly, past unshifted bytes: it gets a stream that starts with them.
        const inbound = new PassThrough();
        inbound.write(head);
        socket.pipe(inbound);
        const duplex = Duplex.from({ readable: inbound, writable: socket });
        socket.on("close", () => duplex.destroy());
        h2.emit("connection", duplex);
        return;
      }
      socket.pause();
      socket.unshift(head);
      h1.emit("connection", socket);
      socket.resume();
    });
  });
  await new Promise<void>((resolve, reject) => {
    tcp.once("error", reject);
    tcp.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = tcp.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    now,
    close: () =>
      new Promise<void>((resolve) => {
        tcp.close(() => resolve());
        for (const socket of sockets) socket.destroy(); // hanging requests included
      }),
  };
}

async function readRequest(req: IncomingMessage, atMs: number): Promise<StubRequest> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks);
  const url = new URL(req.url ?? "/", "http://stub");
  return {
    method: req.method ?? "",
    path: decodeURIComponent(url.pathname),
    rawPath: url.pathname,
    query: Object.fromEntries(url.searchParams),
    // HTTP/2 names the host in `:authority`.
    headers: Object.fromEntries(
      Object.entries({ host: req.headers[":authority"], ...req.headers })
        .filter(([k, v]) => !k.startsWith(":") && v !== undefined)
        .map(([k, v]) => [k, String(v)]),
    ),
    body: parseJson(raw.toString("utf8")),
    raw,
    atMs,
  };
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json; charset=UTF-8",
    "content-length": Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

/**
 * A stub's script: each request takes the next scripted response (`next`, undefined once it is
 * empty); `controls` are the stub's `script`, `pending` and `reset` (which also empties `logs`).
 */
export function createScript<R>(logs: unknown[][]) {
  const scripted: R[] = [];
  return {
    next: (): R | undefined => scripted.shift(),
    controls: {
      script: (...responses: R[]) => {
        scripted.push(...responses);
      },
      pending: () => scripted.length,
      reset: () => {
        scripted.length = 0;
        for (const log of logs) log.length = 0;
      },
    },
  };
}

export const pause = (ms: number) => (ms > 0 ? new Promise((resolve) => setTimeout(resolve, ms)) : Promise.resolve());

/** A body as JSON, else as its text; undefined when empty. */
export function parseJson(text: string): unknown {
  if (text === "") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export function wordsOf(text: string): number {
  return text.split(/\s+/).filter((w) => w !== "").length;
}
