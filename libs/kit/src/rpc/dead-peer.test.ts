import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { constants, createServer, type Http2Server, type ServerHttp2Stream } from "node:http2";
import type { Socket } from "node:net";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { ExecutionService } from "@kiln/proto/execution";
import { afterEach, describe, expect, it } from "vitest";
import { executionTestService, testTokens as tokens } from "../../test/test-services.js";
import { createForwardInterceptor } from "./auth-interceptor.js";
import { remoteErrorOf } from "./connect-errors.js";
import { buildRpcServer, type RpcServer } from "./rpc-server.js";
import { createNetworkTransport, type NetworkTransport } from "./transport.js";

const asTestService = [createForwardInterceptor(tokens, { type: "service", id: "test" })];

/** A real process serving h2c that takes every stream and never answers: killed with SIGKILL mid-call. */
async function startDoomedProcess(): Promise<{ child: ChildProcess; url: string; streams: () => Promise<void> }> {
  const script = `
    const h2 = require("node:http2");
    const s = h2.createServer();
    s.on("stream", () => process.stdout.write("stream\\n"));
    s.listen(0, "127.0.0.1", () => process.stdout.write("port " + s.address().port + "\\n"));`;
  const child = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "inherit"] });
  const lines: string[] = [];
  const waiters: (() => void)[] = [];
  child.stdout?.setEncoding("utf8").on("data", (d: string) => {
    lines.push(...d.split("\n").filter(Boolean));
    for (const w of waiters.splice(0)) w();
  });
  const until = async (test: () => boolean) => {
    while (!test()) await new Promise<void>((r) => waiters.push(r));
  };
  await until(() => lines.some((l) => l.startsWith("port ")));
  const port = lines.find((l) => l.startsWith("port "))?.slice(5);
  return { child, url: `http://127.0.0.1:${port}`, streams: () => until(() => lines.includes("stream")) };
}

/** An in-process h2c server that answers every stream with what `onStream` does to it. */
async function startRawServer(
  onStream: (stream: ServerHttp2Stream, sockets: Set<Socket>) => void,
): Promise<{ server: Http2Server; url: string }> {
  const server = createServer();
  const sockets = new Set<Socket>();
  server.on("connection", (socket: Socket) => sockets.add(socket));
  // What the server side of a broken stream says is not what this test is about.
  server.on("session", (session) => session.on("error", () => undefined));
  server.on("stream", (stream) => {
    stream.on("error", () => undefined);
    onStream(stream, sockets);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as { port: number };
  return { server, url: `http://127.0.0.1:${port}` };
}

describe("a peer that dies or breaks the connection mid-call", () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  function clientOf(url: string) {
    const network: NetworkTransport = createNetworkTransport({ baseUrl: url, interceptors: asTestService });
    cleanups.push(() => network.close());
    return createClient(ExecutionService, network.transport);
  }

  it("reads a kill -9 of the called process as unavailable, not internal", async () => {
    const doomed = await startDoomedProcess();
    cleanups.push(() => doomed.child.kill("SIGKILL"));
    const failed = clientOf(doomed.url)
      .listModels({})
      .catch((e: unknown) => e);
    await doomed.streams();
    doomed.child.kill("SIGKILL");
    expect(remoteErrorOf(await failed).kind).toBe("unavailable");
  });

  it("reads an HTTP/2 stream CANCEL, a reset connection and a destroyed session as unavailable", async () => {
    const behaviours: ((stream: ServerHttp2Stream, sockets: Set<Socket>) => void)[] = [
      (s) => s.close(constants.NGHTTP2_CANCEL),
      (_, sockets) => {
        for (const socket of sockets) socket.resetAndDestroy();
      },
      (s) => s.session?.destroy(),
      (s) => s.close(constants.NGHTTP2_INTERNAL_ERROR),
    ];
    for (const behave of behaviours) {
      const raw = await startRawServer(behave);
      cleanups.push(() => raw.server.close());
      const error = await clientOf(raw.url)
        .listModels({})
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ConnectError);
      expect(remoteErrorOf(error)).toEqual({
        kind: "unavailable",
        message: "a service is unavailable; retry later",
        details: [],
      });
    }
  });

  it("passes a dead peer on as unavailable: a service whose own call to another one failed answers Unavailable", async () => {
    const doomed = await startDoomedProcess();
    cleanups.push(() => doomed.child.kill("SIGKILL"));
    const downstream = clientOf(doomed.url);
    const middle: RpcServer = await buildRpcServer(
      executionTestService("middle", { listModels: () => downstream.listModels({}) }),
    );
    cleanups.push(() => middle.app.close());
    const url = await middle.app.listen({ host: "127.0.0.1", port: 0 });
    const failed = clientOf(url)
      .listModels({})
      .catch((e: unknown) => e);
    await doomed.streams();
    doomed.child.kill("SIGKILL");
    const error = ConnectError.from(await failed);
    expect(error.code).toBe(Code.Unavailable);
    expect(remoteErrorOf(error).kind).toBe("unavailable");
  });

  it("still reads a server's own internal error as internal", async () => {
    const server: RpcServer = await buildRpcServer(
      executionTestService("broken", {
        listModels: () => {
          throw new Error("a bug");
        },
      }),
    );
    cleanups.push(() => server.app.close());
    const url = await server.app.listen({ host: "127.0.0.1", port: 0 });
    const error = await clientOf(url)
      .listModels({})
      .catch((e: unknown) => e);
    expect(remoteErrorOf(error)).toEqual({ kind: "internal", message: "internal error", details: [] });
  });
});
