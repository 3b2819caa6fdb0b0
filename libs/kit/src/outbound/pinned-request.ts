/**
 * One HTTP/1.1 request to addresses already checked, never resolved again: the socket's `lookup`
 * returns those addresses, so a DNS answer that changes between the check and the connection
 * (DNS rebinding) cannot move the call. The Host header and TLS server name stay the URL's host,
 * so virtual hosting and certificate checks work as usual. Redirects are not followed (Node's
 * client never does) and the body is read up to a limit.
 */
import type { LookupAddress, LookupOptions } from "node:dns";
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from "node:http";
import * as http from "node:http";
import * as https from "node:https";
import type { LookupFunction } from "node:net";
import { OutboundFailure } from "./outbound-failure.js";

export interface PinnedRequest {
  url: URL;
  method: "GET" | "POST";
  headers: OutgoingHttpHeaders;
  body?: Buffer;
  /** Where to connect for `url.hostname`: every one of them checked. */
  addresses: readonly LookupAddress[];
  maxResponseBytes: number;
  /** Aborting destroys the socket; the promise then rejects with the signal's reason or a socket error. */
  signal: AbortSignal;
}

export interface PinnedResponse {
  status: number;
  headers: IncomingHttpHeaders;
  /** Empty for redirects: their body is never read. */
  body: Buffer;
}

/** The brackets of an IPv6 literal are URL syntax, not part of the host. */
export function bareHostname(url: URL): string {
  return url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
}

function familyOf(options: LookupOptions): 0 | 4 | 6 {
  const family = options.family;
  if (family === 4 || family === "IPv4") return 4;
  if (family === 6 || family === "IPv6") return 6;
  return 0;
}

function pinnedLookup(expectedHost: string, addresses: readonly LookupAddress[]): LookupFunction {
  return (hostname, options, callback) => {
    const family = familyOf(options);
    const answers = addresses.filter((a) => family === 0 || a.family === family);
    const first = answers[0];
    if (hostname !== expectedHost || first === undefined) {
      const error: NodeJS.ErrnoException = new Error(`no checked address for ${hostname}`);
      error.code = "ENOTFOUND";
      callback(error, "", 0);
    } else if (options.all)
      callback(
        null,
        answers.map((a) => ({ ...a })),
      );
    else callback(null, first.address, first.family);
  };
}

export function isRedirect(status: number): boolean {
  return status >= 300 && status < 400 && status !== 304;
}

export function sendPinnedRequest(request: PinnedRequest): Promise<PinnedResponse> {
  const { url, maxResponseBytes } = request;
  const hostname = bareHostname(url);
  return new Promise((resolve, reject) => {
    const client = url.protocol === "https:" ? https : http;
    const outgoing = client.request({
      protocol: url.protocol,
      hostname,
      port: url.port === "" ? undefined : Number(url.port),
      path: `${url.pathname}${url.search}`,
      method: request.method,
      headers: request.headers,
      lookup: pinnedLookup(hostname, request.addresses),
      // A socket of its own: a pooled one may have been opened for an earlier check.
      agent: false,
      signal: request.signal,
    });
    const tooLarge = () =>
      new OutboundFailure("response_too_large", `response exceeds ${formatBytes(maxResponseBytes)}; reading stopped`);

    outgoing.on("error", reject);
    outgoing.on("response", (response) => {
      const status = response.statusCode ?? 0;
      response.on("error", reject);
      if (isRedirect(status)) {
        outgoing.destroy();
        resolve({ status, headers: response.headers, body: Buffer.alloc(0) });
        return;
      }
      const declared = Number(response.headers["content-length"]);
      if (Number.isFinite(declared) && declared > maxResponseBytes) {
        outgoing.destroy();
        reject(tooLarge());
        return;
      }
      const chunks: Buffer[] = [];
      let received = 0;
      response.on("data", (chunk: Buffer) => {
        received += chunk.length;
        if (received > maxResponseBytes) {
          outgoing.destroy();
          reject(tooLarge());
        } else chunks.push(chunk);
      });
      response.on("end", () => resolve({ status, headers: response.headers, body: Buffer.concat(chunks) }));
      response.on("close", () => {
        if (!response.complete)
          reject(Object.assign(new Error("the connection closed mid-response"), { code: "ECONNRESET" }));
      });
    });
    outgoing.end(request.body);
  });
}

function formatBytes(bytes: number): string {
  if (bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}
