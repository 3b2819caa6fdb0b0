/** The plumbing of the provider stubs (Gemini, Bedrock): a local server, bodies read and sent, a request log. */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface StubRequest {
  method: string;
  /** The path without the query. */
  path: string;
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

/** Starts a server on 127.0.0.1 with a free port, handing each request, read whole, to `handle`. */
export async function listenStub(
  handle: (request: StubRequest, res: ServerResponse) => Promise<void>,
): Promise<{ server: Server; origin: string; now: () => number; close: () => Promise<void> }> {
  const started = performance.now();
  const now = () => performance.now() - started;
  const server = createServer((req, res) => {
    void readRequest(req, now())
      .then((request) => handle(request, res))
      .catch(() => {
        if (!res.headersSent) sendJson(res, 500, { error: { code: 500, message: "stub failure", status: "INTERNAL" } });
      });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    server,
    origin: `http://127.0.0.1:${port}`,
    now,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections(); // hanging requests included
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
    query: Object.fromEntries(url.searchParams),
    headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)])),
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

export const pause = (ms: number) => (ms > 0 ? new Promise((resolve) => setTimeout(resolve, ms)) : Promise.resolve());

function parseJson(text: string): unknown {
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
