import { once } from "node:events";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import * as tls from "node:tls";
import { parseHostPatterns } from "@kiln/kit/outbound/host-patterns";
import { afterEach, describe, expect, it } from "vitest";
import { TEST_TLS_CERT, TEST_TLS_KEY } from "../../test/test-tls-cert.js";
import {
  createToolExecutor,
  type ExecutableTool,
  type ResolveHost,
  type ToolExecutorOptions,
} from "./tool-executor.js";

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

interface TestServer {
  port: number;
  seen: Seen[];
  /** Connections opened, answered or not. */
  connections: number;
  /** Requests whose connection closed before the handler finished. */
  closedEarly: number;
}

type Handler = (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void | Promise<void>;

const closers: (() => Promise<void>)[] = [];

afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

/** A real HTTP server on 127.0.0.1, closed after the test; records what it was sent. */
async function startServer(handler: Handler): Promise<TestServer> {
  const state: TestServer = { port: 0, seen: [], connections: 0, closedEarly: 0 };
  const server = http.createServer(async (req, res) => {
    res.on("close", () => {
      if (!res.writableFinished) state.closedEarly += 1;
    });
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString("utf8");
    state.seen.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body });
    await handler(req, res, body);
  });
  server.on("connection", () => {
    state.connections += 1;
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  state.port = (server.address() as AddressInfo).port;
  closers.push(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return state;
}

function sendJson(res: http.ServerResponse, status: number, value: unknown) {
  res.writeHead(status, { "content-type": "application/json; charset=utf-8" });
  res.end(JSON.stringify(value));
}

const OPEN_SCHEMA = { type: "object" };
/** Host patterns as the configuration loader makes them (its forms: kit/src/outbound/host-patterns.test.ts). */
const patterns = (...entries: string[]) => parseHostPatterns(entries.join(","));
const LOOPBACK = {
  allowlist: { hosts: patterns("127.0.0.1") },
  allowPrivateFor: patterns("127.0.0.1"),
} satisfies ToolExecutorOptions;

function httpTool(config: Record<string, unknown>, inputSchema: unknown = OPEN_SCHEMA): ExecutableTool {
  return { toolKey: "weather", toolVersionId: "tv_1", type: "http", config, inputSchema };
}

/** A resolver that answers from a table and records every question. */
function fakeDns(table: Record<string, string[]>): ResolveHost & { questions: string[] } {
  const questions: string[] = [];
  const resolve = async (hostname: string) => {
    questions.push(hostname);
    const addresses = table[hostname];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
    return addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };
  return Object.assign(resolve, { questions });
}

describe("http tools: requests and responses", () => {
  it("sends a GET's input as query parameters and returns the parsed JSON", async () => {
    const server = await startServer((req, res) => sendJson(res, 200, { echoed: req.url }));
    const executor = createToolExecutor(LOOPBACK);
    const result = await executor.execute(
      httpTool({ url: `http://127.0.0.1:${server.port}/forecast?units=metric`, method: "GET" }),
      { city: "São Paulo", days: 3, metric: true, tags: ["a", "b"], at: { lat: 1 }, none: null },
    );
    expect(result.error).toBeUndefined();
    const query = new URLSearchParams(server.seen[0]!.url.split("?")[1]);
    expect([...query]).toEqual([
      ["units", "metric"],
      ["city", "São Paulo"],
      ["days", "3"],
      ["metric", "true"],
      ["tags", '["a","b"]'],
      ["at", '{"lat":1}'],
      ["none", "null"],
    ]);
    expect(result.output).toEqual({ echoed: server.seen[0]!.url });
    expect(server.seen[0]!.method).toBe("GET");
    expect(server.seen[0]!.body).toBe("");
    expect(result.latencyMs).toBeGreaterThanOrEqual(0);
  });

  it("sends a POST's input as a JSON body", async () => {
    const server = await startServer((_req, res, body) => sendJson(res, 201, { got: JSON.parse(body) }));
    const input = { city: "Oslo", nested: { list: [1, 2, { deep: true }] } };
    const result = await createToolExecutor(LOOPBACK).execute(
      httpTool({ url: `http://127.0.0.1:${server.port}/forecast`, method: "POST" }),
      input,
    );
    expect(result).toMatchObject({ output: { got: input } });
    expect(result.error).toBeUndefined();
    const seen = server.seen[0]!;
    expect(seen.method).toBe("POST");
    expect(seen.headers["content-type"]).toBe("application/json");
    expect(seen.headers["content-length"]).toBe(String(Buffer.byteLength(JSON.stringify(input))));
  });

  it("sends the configured headers and its own Host", async () => {
    const server = await startServer((_req, res) => sendJson(res, 200, {}));
    await createToolExecutor(LOOPBACK).execute(
      httpTool({
        url: `http://127.0.0.1:${server.port}/`,
        method: "GET",
        headers: { "X-Api-Key": "k-123", Authorization: "Bearer secret-token", Accept: "application/vnd.x+json" },
      }),
      {},
    );
    const headers = server.seen[0]!.headers;
    expect(headers["x-api-key"]).toBe("k-123");
    expect(headers.authorization).toBe("Bearer secret-token");
    expect(headers.accept).toBe("application/vnd.x+json");
    expect(headers.host).toBe(`127.0.0.1:${server.port}`);
    expect(headers["accept-encoding"]).toBe("identity");
  });

  it("refuses configured headers the client sets itself, without calling and without echoing values", async () => {
    const server = await startServer((_req, res) => sendJson(res, 200, {}));
    const executor = createToolExecutor(LOOPBACK);
    for (const name of ["Host", "Transfer-Encoding", "Connection", "Content-Length", "Upgrade"]) {
      const result = await executor.execute(
        httpTool({ url: `http://127.0.0.1:${server.port}/`, method: "GET", headers: { [name]: "s3cret-value" } }),
        {},
      );
      expect(result.error).toMatchObject({ code: "invalid_tool_config" });
      expect(result.error?.message).toContain(name);
      expect(JSON.stringify(result.error)).not.toContain("s3cret-value");
    }
    const broken = await executor.execute(
      httpTool({ url: `http://127.0.0.1:${server.port}/`, method: "GET", headers: { "X-Key": "s3cret\r\nX-Evil: 1" } }),
      {},
    );
    expect(broken.error).toMatchObject({ code: "invalid_tool_config" });
    expect(JSON.stringify(broken.error)).not.toContain("s3cret");
    expect(server.connections).toBe(0);
  });

  it("returns status and text when the response is not JSON", async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/plain; charset=utf-8" });
      res.end("sunny, 21°C");
    });
    const result = await createToolExecutor(LOOPBACK).execute(
      httpTool({ url: `http://127.0.0.1:${server.port}/`, method: "GET" }),
      {},
    );
    expect(result).toEqual({ output: { status: 200, text: "sunny, 21°C" }, latencyMs: expect.any(Number) });
  });

  it("reports a non-2xx status as an http_error with the status", async () => {
    const server = await startServer((_req, res) => sendJson(res, 404, { message: "no such city" }));
    const result = await createToolExecutor(LOOPBACK).execute(
      httpTool({ url: `http://127.0.0.1:${server.port}/`, method: "GET" }),
      {},
    );
    expect(result.output).toBeNull();
    expect(result.error).toEqual({ code: "http_error", status: 404, message: 'HTTP 404: {"message":"no such city"}' });
  });

  it("reports a JSON-labelled body that does not parse", async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end("{not json");
    });
    const result = await createToolExecutor(LOOPBACK).execute(
      httpTool({ url: `http://127.0.0.1:${server.port}/`, method: "GET" }),
      {},
    );
    expect(result.error).toMatchObject({ code: "invalid_response" });
  });

  it("validates the input before calling", async () => {
    const server = await startServer((_req, res) => sendJson(res, 200, {}));
    const schema = { type: "object", properties: { city: { type: "string" } }, required: ["city"] };
    const result = await createToolExecutor(LOOPBACK).execute(
      httpTool({ url: `http://127.0.0.1:${server.port}/`, method: "GET" }, schema),
      { city: 12 },
    );
    expect(result.error).toMatchObject({
      code: "invalid_tool_input",
      details: [{ field: "input.city", issue: "must be string" }],
    });
    expect(server.connections).toBe(0);
  });

  it("refuses a GET input field that would replace a query parameter of the URL", async () => {
    const server = await startServer((_req, res) => sendJson(res, 200, {}));
    const result = await createToolExecutor(LOOPBACK).execute(
      httpTool({ url: `http://127.0.0.1:${server.port}/?apiKey=fixed`, method: "GET" }),
      { apiKey: "stolen" },
    );
    expect(result.error).toMatchObject({ code: "invalid_tool_input" });
    expect(result.error?.message).toContain("input.apiKey");
    expect(server.connections).toBe(0);
  });
});

describe("http tools: allowlist", () => {
  it("refuses a host that is not on the allowlist, without connecting", async () => {
    const server = await startServer((_req, res) => sendJson(res, 200, {}));
    const executor = createToolExecutor({
      allowlist: { hosts: patterns("api.tools.test") },
      allowPrivateFor: patterns("127.0.0.1"),
    });
    const result = await executor.execute(httpTool({ url: `http://127.0.0.1:${server.port}/`, method: "GET" }), {});
    expect(result.error).toEqual({
      code: "host_not_allowed",
      message: 'host "127.0.0.1" is not on the allowlist of this deployment',
    });
    expect(server.connections).toBe(0);
  });

  it("matches wildcard patterns on subdomains only, case-insensitively, ignoring a trailing dot", async () => {
    const server = await startServer((req, res) => sendJson(res, 200, { host: req.headers.host }));
    const dns = fakeDns({
      // Resolved as written: a trailing dot makes the name absolute, as the URL means it.
      "eu.api.tools.test.": ["127.0.0.1"],
      "api.tools.test": ["127.0.0.1"],
      "tools.test": ["127.0.0.1"],
      "eviltools.test": ["127.0.0.1"],
    });
    const executor = createToolExecutor({
      allowlist: { hosts: patterns("*.TOOLS.test.") },
      allowPrivateFor: patterns("*.tools.test", "tools.test", "eviltools.test"),
      lookup: dns,
    });
    const call = (host: string) =>
      executor.execute(httpTool({ url: `http://${host}:${server.port}/`, method: "GET" }), {});
    expect((await call("EU.Api.Tools.Test.")).output).toEqual({ host: `eu.api.tools.test.:${server.port}` });
    expect((await call("api.tools.test")).error).toBeUndefined();
    expect((await call("tools.test")).error?.code).toBe("host_not_allowed");
    expect((await call("eviltools.test")).error?.code).toBe("host_not_allowed");
    expect(server.seen).toHaveLength(2);
    expect(dns.questions).toEqual(["eu.api.tools.test.", "api.tools.test"]);
  });

  it("narrows the allowlist for an organization", async () => {
    const executor = createToolExecutor({
      allowlist: {
        hosts: patterns("*.tools.test"),
        byOrganization: new Map([["org_narrow", patterns("eu.tools.test")]]),
      },
      lookup: fakeDns({ "us.tools.test": ["203.0.113.10"] }),
    });
    const tool = { ...httpTool({ url: "http://us.tools.test/", method: "GET" }), organizationId: "org_narrow" };
    expect((await executor.execute(tool, {})).error?.code).toBe("host_not_allowed");
  });
});

describe("http tools: addresses", () => {
  it("refuses loopback unless the host is allowed private addresses", async () => {
    const server = await startServer((_req, res) => sendJson(res, 200, { ok: true }));
    const tool = httpTool({ url: `http://127.0.0.1:${server.port}/`, method: "GET" });
    const refused = await createToolExecutor({ allowlist: { hosts: patterns("127.0.0.1") } }).execute(tool, {});
    expect(refused.error).toMatchObject({ code: "address_not_allowed" });
    expect(refused.error?.message).toContain('"loopback"');
    expect(server.connections).toBe(0);
    const allowed = await createToolExecutor(LOOPBACK).execute(tool, {});
    expect(allowed.output).toEqual({ ok: true });
  });

  it.each([
    ["10.1.2.3", "10.1.2.3"],
    ["172.16.0.1", "172.16.0.1"],
    ["192.168.1.1", "192.168.1.1"],
    ["100.64.0.1", "100.64.0.1"],
    ["169.254.169.254", "169.254.169.254"],
    ["0.0.0.0", "0.0.0.0"],
    ["[::1]", "[::1]"],
    ["[fe80::1]", "[fe80::1]"],
    ["[fc00::]", "[fc00::]"],
    ["[::ffff:127.0.0.1]", "[::ffff:7f00:1]"],
    ["[64:ff9b::a9fe:a9fe]", "[64:ff9b::a9fe:a9fe]"],
    ["[::]", "[::]"],
  ])("refuses the IP literal %s", async (literal, canonical) => {
    const executor = createToolExecutor({ allowlist: { hosts: patterns(canonical) } });
    const result = await executor.execute(httpTool({ url: `http://${literal}:9/`, method: "GET" }), {});
    expect(result.error).toMatchObject({ code: "address_not_allowed" });
  });

  it("reads numeric spellings of IPv4 as the address they spell (WHATWG URL)", () => {
    for (const spelling of ["2130706433", "0x7f000001", "0177.0.0.1", "0x7f.1", "127.1", "127.0.0.1."]) {
      expect(new URL(`http://${spelling}:80/`).hostname).toBe("127.0.0.1");
    }
  });

  it.each(["2130706433", "0x7f000001", "0177.0.0.1", "127.1", "0x7f.1"])(
    "refuses the loopback spelled %s, and reaches the server only when loopback is allowed",
    async (spelling) => {
      const server = await startServer((_req, res) => sendJson(res, 200, { ok: true }));
      const tool = httpTool({ url: `http://${spelling}:${server.port}/`, method: "GET" });
      const refused = await createToolExecutor({ allowlist: { hosts: patterns("127.0.0.1") } }).execute(tool, {});
      expect(refused.error).toMatchObject({ code: "address_not_allowed" });
      expect(server.connections).toBe(0);
      expect((await createToolExecutor(LOOPBACK).execute(tool, {})).output).toEqual({ ok: true });
    },
  );

  it("refuses a hostname that resolves to a private address", async () => {
    const dns = fakeDns({ "internal.tools.test": ["10.0.0.5"] });
    const executor = createToolExecutor({ allowlist: { hosts: patterns("*.tools.test") }, lookup: dns });
    const result = await executor.execute(httpTool({ url: "http://internal.tools.test/", method: "GET" }), {});
    expect(result.error).toEqual({
      code: "address_not_allowed",
      message:
        'host "internal.tools.test" resolves to an address in the "private" range; http tools may only call public addresses unless the host is allowed private ones',
    });
    expect(dns.questions).toEqual(["internal.tools.test"]);
  });

  it.each([
    [["93.184.216.34", "127.0.0.1"]],
    [["2606:4700::1111", "::ffff:10.0.0.1"]],
    [["93.184.216.34", "169.254.169.254"]],
    [["2606:4700::1111", "fe80::1"]],
  ])("refuses a host when any of its addresses is not public: %j", async (addresses) => {
    const executor = createToolExecutor({
      allowlist: { hosts: patterns("mixed.tools.test") },
      lookup: fakeDns({ "mixed.tools.test": addresses }),
    });
    const result = await executor.execute(httpTool({ url: "http://mixed.tools.test/", method: "GET" }), {});
    expect(result.error?.code).toBe("address_not_allowed");
  });

  it("refuses unroutable addresses even for hosts allowed private ones", async () => {
    const executor = createToolExecutor({
      allowlist: { hosts: patterns("*.tools.test") },
      allowPrivateFor: patterns("*.tools.test"),
      lookup: fakeDns({ "zero.tools.test": ["0.0.0.0"], "multi.tools.test": ["ff02::1"] }),
    });
    for (const host of ["zero.tools.test", "multi.tools.test"]) {
      const result = await executor.execute(httpTool({ url: `http://${host}/`, method: "GET" }), {});
      expect(result.error?.code).toBe("address_not_allowed");
    }
  });

  it("refuses localhost through the real resolver", async () => {
    const executor = createToolExecutor({ allowlist: { hosts: patterns("localhost") } });
    const result = await executor.execute(httpTool({ url: "http://localhost:9/", method: "GET" }), {});
    expect(result.error?.code).toBe("address_not_allowed");
  });

  it("reports a name that does not resolve as a network error", async () => {
    const executor = createToolExecutor({ allowlist: { hosts: patterns("*.tools.test") }, lookup: fakeDns({}) });
    const result = await executor.execute(httpTool({ url: "http://gone.tools.test/", method: "GET" }), {});
    expect(result.error).toEqual({ code: "network_error", message: 'could not resolve host "gone.tools.test"' });
  });

  it("connects to the checked address, resolving once, with the URL's Host", async () => {
    const server = await startServer((req, res) => sendJson(res, 200, { host: req.headers.host }));
    const dns = fakeDns({ "api.tools.test": ["127.0.0.1"] });
    const executor = createToolExecutor({
      allowlist: { hosts: patterns("api.tools.test") },
      allowPrivateFor: patterns("api.tools.test"),
      lookup: dns,
    });
    // api.tools.test has no real DNS entry: only the checked address can have been used.
    const result = await executor.execute(
      httpTool({ url: `http://api.tools.test:${server.port}/v1`, method: "POST" }),
      { q: 1 },
    );
    expect(result.output).toEqual({ host: `api.tools.test:${server.port}` });
    expect(server.seen.map((s) => s.url)).toEqual(["/v1"]);
    expect(dns.questions).toEqual(["api.tools.test"]);
  });

  it("speaks TLS to the checked address with the URL's host as server name, verifying the certificate", async () => {
    const serverNames: string[] = [];
    const server = tls.createServer({
      cert: TEST_TLS_CERT,
      key: TEST_TLS_KEY,
      SNICallback: (name, callback) => {
        serverNames.push(name);
        callback(null, tls.createSecureContext({ cert: TEST_TLS_CERT, key: TEST_TLS_KEY }));
      },
    });
    server.on("tlsClientError", () => {});
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    closers.push(() => new Promise((resolve) => server.close(() => resolve())));
    const { port } = server.address() as AddressInfo;
    const executor = createToolExecutor({
      allowlist: { hosts: patterns("api.tools.test") },
      allowPrivateFor: patterns("api.tools.test"),
      lookup: fakeDns({ "api.tools.test": ["127.0.0.1"] }),
    });
    const result = await executor.execute(httpTool({ url: `https://api.tools.test:${port}/`, method: "GET" }), {});
    // The certificate is self-signed: a client that checks certificates refuses it.
    expect(result.error).toMatchObject({ code: "network_error" });
    expect(result.error?.message).toMatch(/CERT|SELF_SIGNED/);
    expect(serverNames).toEqual(["api.tools.test"]);
  });
});

describe("http tools: redirects, limits and cancellation", () => {
  it.each([301, 302, 307])("does not follow a %i redirect", async (status) => {
    const target = await startServer((_req, res) => sendJson(res, 200, { secret: true }));
    const server = await startServer((_req, res) => {
      res.writeHead(status, { location: `http://127.0.0.1:${target.port}/latest/meta-data` });
      res.end();
    });
    const result = await createToolExecutor(LOOPBACK).execute(
      httpTool({ url: `http://127.0.0.1:${server.port}/`, method: "GET" }),
      {},
    );
    expect(result.error).toEqual({
      code: "redirect_not_followed",
      status,
      message: `redirects are not followed (HTTP ${status})`,
    });
    expect(server.seen).toHaveLength(1);
    expect(target.connections).toBe(0);
  });

  it("times out a server that never answers, within the tool's timeout", async () => {
    const server = await startServer(() => {});
    const result = await createToolExecutor(LOOPBACK).execute(
      httpTool({ url: `http://127.0.0.1:${server.port}/`, method: "GET", timeoutMs: 300 }),
      {},
    );
    expect(result.error).toEqual({ code: "timeout", message: "no response within 300 ms" });
    expect(result.latencyMs).toBeGreaterThanOrEqual(250);
    expect(result.latencyMs).toBeLessThan(2_000);
    expect(server.seen).toHaveLength(1);
  });

  it("counts name resolution in the timeout", async () => {
    const executor = createToolExecutor({
      allowlist: { hosts: patterns("slow.tools.test") },
      lookup: () => new Promise(() => {}),
    });
    const result = await executor.execute(
      httpTool({ url: "http://slow.tools.test/", method: "GET", timeoutMs: 200 }),
      {},
    );
    expect(result.error?.code).toBe("timeout");
  });

  it("cuts off a streamed response over 1 MiB and stops reading", async () => {
    let written = 0;
    const total = 16 * 1024 * 1024;
    const server = await startServer(async (_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      const chunk = Buffer.alloc(64 * 1024, "a");
      while (written < total && !res.destroyed) {
        written += chunk.length;
        if (!res.write(chunk)) await Promise.race([once(res, "drain"), once(res, "close")]);
      }
      res.end();
    });
    const result = await createToolExecutor(LOOPBACK).execute(
      httpTool({ url: `http://127.0.0.1:${server.port}/`, method: "GET" }),
      {},
    );
    expect(result.error).toEqual({ code: "response_too_large", message: "response exceeds 1 MiB; reading stopped" });
    await expect.poll(() => server.closedEarly).toBe(1);
    expect(written).toBeLessThan(total);
  });

  it("refuses a declared Content-Length over the limit before reading", async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json", "content-length": String(2 * 1024 * 1024) });
      res.write("[");
    });
    const result = await createToolExecutor(LOOPBACK).execute(
      httpTool({ url: `http://127.0.0.1:${server.port}/`, method: "GET" }),
      {},
    );
    expect(result.error?.code).toBe("response_too_large");
  });

  it("accepts a body of exactly the limit and refuses one byte more", async () => {
    const server = await startServer((req, res) => {
      res.writeHead(200, { "content-type": "text/plain" });
      res.end("x".repeat(req.url === "/exact" ? 1000 : 1001));
    });
    const executor = createToolExecutor({ ...LOOPBACK, maxResponseBytes: 1000 });
    const exact = await executor.execute(httpTool({ url: `http://127.0.0.1:${server.port}/exact`, method: "GET" }), {});
    expect(exact.output).toEqual({ status: 200, text: "x".repeat(1000) });
    const over = await executor.execute(httpTool({ url: `http://127.0.0.1:${server.port}/over`, method: "GET" }), {});
    expect(over.error).toEqual({ code: "response_too_large", message: "response exceeds 1000 bytes; reading stopped" });
  });

  it("stops the call when the caller aborts, rejecting with the caller's reason", async () => {
    const server = await startServer(() => {});
    const controller = new AbortController();
    const started = performance.now();
    setTimeout(() => controller.abort(), 100);
    const call = createToolExecutor(LOOPBACK).execute(
      httpTool({ url: `http://127.0.0.1:${server.port}/`, method: "GET" }),
      {},
      { signal: controller.signal },
    );
    await expect(call).rejects.toMatchObject({ name: "AbortError" });
    expect(performance.now() - started).toBeLessThan(2_000);
    await expect.poll(() => server.closedEarly).toBe(1);
  });

  it("does not call at all when the caller's signal is already aborted", async () => {
    const server = await startServer((_req, res) => sendJson(res, 200, {}));
    const call = createToolExecutor(LOOPBACK).execute(
      httpTool({ url: `http://127.0.0.1:${server.port}/`, method: "GET" }),
      {},
      { signal: AbortSignal.abort() },
    );
    await expect(call).rejects.toMatchObject({ name: "AbortError" });
    expect(server.connections).toBe(0);
  });
});
