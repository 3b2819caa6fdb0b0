/**
 * How a service's port writes its answers, frame by frame: a unary Connect answer ends its stream
 * with its one DATA frame (no empty frame sent after it), a gRPC answer still ends with its
 * trailers, and a server stream still streams. Read off the bytes the server sends, through a TCP
 * relay between a real Connect or gRPC client and the real server.
 */

import { createServer, type Server, connect as tcpConnect } from "node:net";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { ExecutionService } from "@kiln/proto/execution";
import { Health, HealthCheckResponse_ServingStatus } from "@kiln/proto/health";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { executionTestService } from "../../test/test-services.js";
import { buildRpcServer, type RpcServer } from "./rpc-server.js";

let server: RpcServer;
let relay: Server;
let relayUrl: string;
/** What the server sent through the relay, per connection opened since the last reset. */
let connections: Buffer[][] = [];

beforeAll(async () => {
  server = await buildRpcServer(
    executionTestService("execution", {
      async listModels() {
        return { models: [] };
      },
    }),
  );
  const address = new URL(await server.app.listen({ host: "127.0.0.1", port: 0 }));
  relay = createServer((client) => {
    const upstream = tcpConnect(Number(address.port), address.hostname);
    const sent: Buffer[] = [];
    connections.push(sent);
    client.pipe(upstream);
    upstream.on("data", (chunk: Buffer) => {
      sent.push(chunk);
      client.write(chunk);
    });
    upstream.on("close", () => client.destroy());
    client.on("close", () => upstream.destroy());
  });
  await new Promise<void>((resolve) => relay.listen(0, "127.0.0.1", resolve));
  const port = (relay.address() as { port: number }).port;
  relayUrl = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  relay?.close();
  await server?.app.close();
});

beforeEach(() => {
  connections = [];
});

interface Frame {
  type: "DATA" | "HEADERS" | "other";
  streamId: number;
  length: number;
  endStream: boolean;
}

const FRAME_TYPES: Record<number, Frame["type"]> = { 0: "DATA", 1: "HEADERS" };

/** The HTTP/2 frames of the server's side of a connection (RFC 9113 §4.1: a 9-byte header each). */
function framesOf(bytes: Buffer): Frame[] {
  const frames: Frame[] = [];
  for (let at = 0; at + 9 <= bytes.length; ) {
    const length = bytes.readUIntBE(at, 3);
    const type = bytes[at + 3] ?? -1;
    const flags = bytes[at + 4] ?? 0;
    frames.push({
      type: FRAME_TYPES[type] ?? "other",
      streamId: bytes.readUInt32BE(at + 5) & 0x7fffffff,
      length,
      endStream: (type === 0 || type === 1) && (flags & 0x1) !== 0,
    });
    at += 9 + length;
  }
  return frames;
}

/** The frames the server sent, on the connections of this test, on the streams that carried calls. */
const callFrames = () =>
  connections.flatMap((sent) => framesOf(Buffer.concat(sent))).filter((f) => f.streamId !== 0 && f.type !== "other");

describe("a service's answers on the wire", () => {
  it("ends a unary Connect answer with its one DATA frame", async () => {
    const health = createClient(Health, createConnectTransport({ baseUrl: relayUrl, httpVersion: "2" }));
    expect(await health.check({ service: "" })).toMatchObject({ status: HealthCheckResponse_ServingStatus.SERVING });
    const frames = callFrames();
    expect(frames.map((f) => f.type)).toEqual(["HEADERS", "DATA"]);
    expect(frames[1]).toMatchObject({ length: 2, endStream: true });
  });

  it("ends a Connect error answer the same way", async () => {
    const execution = createClient(ExecutionService, createConnectTransport({ baseUrl: relayUrl, httpVersion: "2" }));
    const error = await execution.listModels({}).catch((e: unknown) => e);
    expect(ConnectError.from(error).code).toBe(Code.Unauthenticated);
    const frames = callFrames();
    expect(frames.map((f) => f.type)).toEqual(["HEADERS", "DATA"]);
    expect(frames[1]?.endStream).toBe(true);
    expect(frames[1]?.length).toBeGreaterThan(0);
  });

  it("still ends a gRPC answer with its trailers", async () => {
    const health = createClient(Health, createGrpcTransport({ baseUrl: relayUrl }));
    expect(await health.check({ service: "" })).toMatchObject({ status: HealthCheckResponse_ServingStatus.SERVING });
    const frames = callFrames();
    expect(frames.map((f) => [f.type, f.endStream])).toEqual([
      ["HEADERS", false],
      ["DATA", false],
      ["HEADERS", true],
    ]);
  });

  it("still streams a server stream, one message at a time", async () => {
    const health = createClient(Health, createConnectTransport({ baseUrl: relayUrl, httpVersion: "2" }));
    const aborter = new AbortController();
    const stream = health.watch({ service: "" }, { signal: aborter.signal });
    for await (const answer of stream) {
      // The first status arrives while the stream stays open.
      expect(answer.status).toBe(HealthCheckResponse_ServingStatus.SERVING);
      expect(callFrames().some((f) => f.endStream)).toBe(false);
      break;
    }
    aborter.abort();
  });
});
