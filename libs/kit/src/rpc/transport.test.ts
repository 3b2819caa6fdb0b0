import { createServer } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { Code, ConnectError, createClient, createContextKey, createContextValues } from "@connectrpc/connect";
import { createConnectTransport, Http2SessionManager } from "@connectrpc/connect-node";
import { ExecutionService } from "@kiln/proto/execution";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { executionTestService, testTokens as tokens } from "../../test/test-services.js";
import { kPrincipal } from "../auth/principal.js";
import { invalidArgument } from "../errors.js";
import { createForwardInterceptor } from "./auth-interceptor.js";
import { remoteErrorOf } from "./connect-errors.js";
import { buildRpcServer, type RpcServer } from "./rpc-server.js";
import { createDirectTransport, createNetworkTransport, isNeverStarted, type NetworkTransport } from "./transport.js";

/** A caller's interceptors: the service `test`'s own token on every call. */
const asTestService = [createForwardInterceptor(tokens, { type: "service", id: "test" })];

/** A real h2c server whose ListModels takes `delayMs` and answers with the replica's name. */
async function startReplica(name: string, delayMs: number) {
  let calls = 0;
  const server = await buildRpcServer(
    executionTestService(name, {
      async listModels() {
        calls++;
        await sleep(delayMs);
        return { models: [{ id: name }] };
      },
    }),
  );
  const address = await server.app.listen({ host: "127.0.0.1", port: 0 });
  return { server, url: address, calls: () => calls };
}

/** A port nothing listens on (yet). */
async function unusedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

describe("createNetworkTransport", () => {
  const servers: RpcServer[] = [];
  const transports: NetworkTransport[] = [];
  afterEach(async () => {
    for (const t of transports.splice(0)) t.close();
    await Promise.all(servers.splice(0).map((s) => s.app.close()));
  });

  async function setup(delayMs: number) {
    const a = await startReplica("a", delayMs);
    const b = await startReplica("b", delayMs);
    servers.push(a.server, b.server);
    const network = createNetworkTransport({
      baseUrl: `${a.url},${b.url}`,
      interceptors: asTestService,
    });
    transports.push(network);
    return { a, b, client: createClient(ExecutionService, network.transport) };
  }

  it("spreads calls over every replica", async () => {
    const { a, b, client } = await setup(50);
    const answers = await Promise.all(Array.from({ length: 20 }, () => client.listModels({})));
    const byReplica = answers.map((r) => r.models[0]?.id);
    expect(byReplica.filter((id) => id === "a").length).toBe(10);
    expect(byReplica.filter((id) => id === "b").length).toBe(10);
    expect(a.calls() + b.calls()).toBe(20);
  });

  it("loses no call while a replica drains: its calls in flight finish, new ones go to the other", async () => {
    const { a, b, client } = await setup(100);
    const failures: unknown[] = [];
    let answered = 0;
    let stop = false;
    const loops = Array.from({ length: 8 }, async () => {
      while (!stop) {
        await client.listModels({}).then(
          () => answered++,
          (e: unknown) => failures.push(e),
        );
      }
    });
    await sleep(400);
    const before = a.calls();
    expect(before).toBeGreaterThan(0);
    const drained = a.server.drainAndClose(5_000);
    await sleep(600);
    stop = true;
    await Promise.all(loops);
    await drained;
    expect(failures).toEqual([]);
    // A took nothing after the drain began; the calls it had were answered.
    expect(a.calls()).toBe(before);
    expect(b.calls()).toBeGreaterThan(before);
    expect(answered).toBe(a.calls() + b.calls());
  });

  it("asks for uncompressed answers: a large one arrives as it was written", async () => {
    const big = Array.from({ length: 200 }, (_, i) => ({ id: `model-${i}`, provider: "p".repeat(40) }));
    const server = await buildRpcServer(executionTestService("big", { listModels: async () => ({ models: big }) }));
    servers.push(server);
    const url = await server.app.listen({ host: "127.0.0.1", port: 0 });
    const network = createNetworkTransport({
      baseUrl: url,
      interceptors: asTestService,
    });
    transports.push(network);
    let encoding: string | null = "unset";
    const answer = await createClient(ExecutionService, network.transport).listModels(
      {},
      { onHeader: (h) => (encoding = h.get("content-encoding")) },
    );
    expect(answer.models).toHaveLength(200);
    // The same server compresses for a client that accepts gzip (Connect's default, above 1 KB).
    let defaultEncoding: string | null = "unset";
    const sessionManager = new Http2SessionManager(url);
    try {
      await createClient(
        ExecutionService,
        createConnectTransport({
          baseUrl: url,
          httpVersion: "2",
          sessionManager,
          interceptors: asTestService,
        }),
      ).listModels({}, { onHeader: (h) => (defaultEncoding = h.get("content-encoding")) });
    } finally {
      sessionManager.abort();
    }
    expect(defaultEncoding).toBe("gzip");
    expect(encoding).toBeNull();
  });

  it("retries only what no server started", () => {
    expect(isNeverStarted(new ConnectError("busy", Code.Unavailable))).toBe(false);
    const refused = Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });
    expect(isNeverStarted(new ConnectError("unavailable", Code.Unavailable, undefined, undefined, refused))).toBe(true);
    expect(
      isNeverStarted(new ConnectError("http/2 stream closed with error code REFUSED_STREAM (0x7)", Code.Unavailable)),
    ).toBe(true);
    // Seen when a replica shut down under load: the refusal came through the stream's error event.
    const streamError = Object.assign(new Error("Stream closed with error code NGHTTP2_REFUSED_STREAM"), {
      code: "ERR_HTTP2_STREAM_ERROR",
    });
    expect(
      isNeverStarted(
        new ConnectError(
          "Stream closed with error code NGHTTP2_REFUSED_STREAM",
          Code.Internal,
          undefined,
          undefined,
          streamError,
        ),
      ),
    ).toBe(true);
    expect(isNeverStarted(new ConnectError("reset", Code.Aborted))).toBe(false);
    expect(
      isNeverStarted(new ConnectError("Stream closed with error code NGHTTP2_INTERNAL_ERROR", Code.Internal)),
    ).toBe(false);
  });

  it("calls a replica again soon after it refused a connection and came up, and says so", async () => {
    const a = await startReplica("a", 20);
    const port = await unusedPort();
    const bUrl = `http://127.0.0.1:${port}`;
    // Built before the refusal, so that it listens within a few ms of it.
    const b = await buildRpcServer(
      executionTestService("b", { listModels: async () => sleep(20).then(() => ({ models: [{ id: "b" }] })) }),
    );
    servers.push(a.server, b);
    const logged: Record<string, unknown>[] = [];
    const logger = pino({ level: "info" }, { write: (line: string) => void logged.push(JSON.parse(line)) });
    const network = createNetworkTransport({
      baseUrl: `${a.url},${bUrl}`,
      interceptors: asTestService,
      logger,
    });
    transports.push(network);
    const client = createClient(ExecutionService, network.transport);
    const ids = async (n: number) =>
      (await Promise.all(Array.from({ length: n }, () => client.listModels({})))).map((r) => r.models[0]?.id);
    // Two at once: one goes to b, is refused, and is answered by a.
    expect(await ids(2)).toEqual(["a", "a"]);
    expect(logged).toMatchObject([{ level: 40, msg: "endpoint down", endpoint: bUrl }]);
    await b.app.listen({ host: "127.0.0.1", port });
    const listening = Date.now();
    // Back in rotation well before the 2 s a refusal used to keep it out.
    await expect.poll(async () => (await ids(4)).includes("b"), { timeout: 1_500, interval: 50 }).toBe(true);
    expect(Date.now() - listening).toBeLessThan(1_500);
    expect(logged.slice(1)).toMatchObject([{ level: 30, msg: "endpoint back", endpoint: bUrl }]);
    // And shares the load again.
    const spread = await ids(10);
    expect(spread.filter((id) => id === "b")).toHaveLength(5);
  });

  it("follows the addresses a name resolves to", async () => {
    const a = await startReplica("a", 0);
    servers.push(a.server);
    const port = new URL(a.url).port;
    const looked: string[] = [];
    const network = createNetworkTransport({
      baseUrl: `http://execution.kiln.svc:${port}`,
      interceptors: asTestService,
      resolve: async (host) => {
        looked.push(host);
        return ["127.0.0.1"];
      },
    });
    transports.push(network);
    const res = await createClient(ExecutionService, network.transport).listModels({});
    expect(res.models[0]?.id).toBe("a");
    expect(looked).toEqual(["execution.kiln.svc"]);
  });
});

describe("createDirectTransport", () => {
  const models = [{ id: "a" }];
  let seenPrincipal: unknown;
  const service = executionTestService("direct", {
    async listModels(_req, context) {
      seenPrincipal = context.values.get(kPrincipal);
      return { models };
    },
    async getRun(req, context) {
      if (req.id === "slow") await sleep(5_000, undefined, { signal: context.signal }).catch(() => undefined);
      throw invalidArgument("bad run", [{ field: "runId", issue: "is odd" }]);
    },
  });
  const client = createClient(
    ExecutionService,
    createDirectTransport(service, [createForwardInterceptor(tokens, { type: "service", id: "caller" })]),
  );

  it("runs the client and server interceptors: the server sees the caller the forwarded token names", async () => {
    const answer = await client.listModels({});
    expect(answer.models.map((m) => m.id)).toEqual(["a"]);
    expect(seenPrincipal).toEqual({ type: "service", id: "caller" });
    // The answer is a copy: changing it changes nothing on the server's side.
    answer.models.push({ id: "b" } as never);
    expect(models).toHaveLength(1);
  });

  it("hands domain errors over as Connect errors with their details", async () => {
    const error = ConnectError.from(await client.getRun({ id: "x" }).catch((e: unknown) => e));
    expect(error.code).toBe(Code.InvalidArgument);
    expect(remoteErrorOf(error)).toEqual({
      kind: "invalid_argument",
      message: "bad run",
      details: [{ field: "runId", issue: "is odd" }],
    });
  });

  it("refuses a call without credentials, and ends a call at its deadline", async () => {
    const anonymous = createClient(ExecutionService, createDirectTransport(service, []));
    expect(ConnectError.from(await anonymous.listModels({}).catch((e: unknown) => e)).code).toBe(Code.Unauthenticated);
    const late = await client.getRun({ id: "slow" }, { timeoutMs: 50 }).catch((e: unknown) => e);
    expect(ConnectError.from(late).code).toBe(Code.DeadlineExceeded);
  });
});

describe("a service's contextValues hook", () => {
  const kArrived = createContextKey<string>("", { description: "the path the call arrived on" });
  const service = executionTestService(
    "hook",
    {
      async listModels(_req, context) {
        // Set as the call arrived, and still there beside what the interceptors added.
        return { models: [{ id: `${context.values.get(kArrived)} ${context.values.get(kPrincipal)?.id}` }] };
      },
    },
    (path) => createContextValues().set(kArrived, path),
  );
  const forward = [createForwardInterceptor(tokens, { type: "service", id: "caller" })];
  const expected = "/kiln.execution.v1.ExecutionService/ListModels caller";

  it("gives a call over the network the values it made from the call's path", async () => {
    const server = await buildRpcServer(service);
    const url = await server.app.listen({ host: "127.0.0.1", port: 0 });
    const network = createNetworkTransport({ baseUrl: url, interceptors: forward });
    try {
      const answer = await createClient(ExecutionService, network.transport).listModels({});
      expect(answer.models.map((m) => m.id)).toEqual([expected]);
    } finally {
      network.close();
      await server.app.close();
    }
  });

  it("gives an in-process call the same values", async () => {
    const answer = await createClient(ExecutionService, createDirectTransport(service, forward)).listModels({});
    expect(answer.models.map((m) => m.id)).toEqual([expected]);
  });
});
