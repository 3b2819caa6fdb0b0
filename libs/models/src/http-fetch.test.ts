/** The provider calls' fetch over node:http against a local server: what the SDK relies on from fetch. */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHttpFetch } from "./http-fetch.js";

let server: Server;
let base: string;
const seen: { method?: string; url?: string; headers: IncomingMessage["headers"]; body: string }[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => {
      body += c;
    });
    req.on("end", () => {
      seen.push({ method: req.method, url: req.url, headers: req.headers, body });
      if (req.url === "/gzip") {
        res.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip" });
        res.end(gzipSync(JSON.stringify({ ok: "zipped" })));
      } else if (req.url === "/empty") res.writeHead(204).end();
      else if (req.url === "/hang") setTimeout(() => res.end("late"), 2_000);
      else if (req.url === "/limited") res.writeHead(429, { "retry-after": "3", "x-a": "1" }).end("slow down");
      else res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ echo: body }));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

describe("createHttpFetch", () => {
  const f = createHttpFetch();

  it("sends the method, headers and body, and answers a standard Response", async () => {
    const res = await f(`${base}/json`, {
      method: "POST",
      headers: new Headers({ "content-type": "application/json", authorization: "Bearer sk-x" }),
      body: JSON.stringify({ héllo: 1 }),
    });
    expect(res).toBeInstanceOf(Response);
    expect(res.ok).toBe(true);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(await res.json()).toEqual({ echo: '{"héllo":1}' });
    const sent = seen.at(-1);
    expect(sent?.method).toBe("POST");
    expect(sent?.headers.authorization).toBe("Bearer sk-x");
    expect(sent?.headers["content-length"]).toBe(String(Buffer.byteLength('{"héllo":1}')));
  });

  it("reads the body once, as a stream, bytes or text, and clones it before it is read", async () => {
    const call = () => f(`${base}/json`, { method: "POST", body: "abc" });
    const expected = JSON.stringify({ echo: "abc" });

    const streamed = await call();
    expect(streamed.bodyUsed).toBe(false);
    expect(await new Response(streamed.body).text()).toBe(expected);
    expect(streamed.bodyUsed).toBe(true);
    await expect(streamed.text()).rejects.toThrow(TypeError);

    const bytes = await call();
    const copy = bytes.clone();
    expect(new TextDecoder().decode(await bytes.arrayBuffer())).toBe(expected);
    expect(bytes.bodyUsed).toBe(true);
    await expect(bytes.json()).rejects.toThrow(TypeError);
    expect(() => bytes.clone()).toThrow(TypeError);
    expect([copy.status, copy.headers.get("content-type"), await copy.text()]).toEqual([
      200,
      "application/json",
      expected,
    ]);

    // What the provider does to mark an answer: a new Response over this one's body.
    const marked = new Response((await call()).body, { status: 429 });
    expect(await marked.text()).toBe(expected);
  });

  it("decompresses a gzip answer, gives a 204 no body, and keeps an error's status, headers and text", async () => {
    const zipped = await f(`${base}/gzip`);
    expect(zipped.headers.get("content-encoding")).toBeNull();
    expect(await zipped.json()).toEqual({ ok: "zipped" });
    const empty = await f(`${base}/empty`, { method: "DELETE" });
    expect(empty.status).toBe(204);
    expect(empty.body).toBeNull();
    const limited = await f(`${base}/limited`, { method: "POST", body: "{}" });
    expect([limited.status, limited.ok, limited.headers.get("retry-after"), await limited.text()]).toEqual([
      429,
      false,
      "3",
      "slow down",
    ]);
  });

  it("rejects with the signal's reason when aborted, before or during the call", async () => {
    const reason = new Error("run cancelled");
    await expect(f(`${base}/json`, { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    const controller = new AbortController();
    const call = f(`${base}/hang`, { signal: controller.signal });
    setTimeout(() => controller.abort(reason), 50);
    await expect(call).rejects.toBe(reason);
  });

  it("rejects a connection failure as fetch does: TypeError with the socket error as cause", async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
    const { port } = closed.address() as AddressInfo;
    await new Promise((r) => closed.close(r));
    const e = await f(`http://127.0.0.1:${port}/`).catch((err: unknown) => err);
    expect(e).toBeInstanceOf(TypeError);
    expect((e as TypeError).message).toBe("fetch failed");
    expect(((e as TypeError).cause as { code?: string }).code).toBe("ECONNREFUSED");
  });

  it("hands what it does not handle (a Request object) to the global fetch", async () => {
    const res = await f(new Request(`${base}/json`, { method: "POST", body: "from a Request" }));
    expect(await res.json()).toEqual({ echo: "from a Request" });
  });
});
