/**
 * `pnpm bench:hop`: what one RPC hop between two processes costs on this machine. A server built
 * as every service builds it (kit's defineService + buildRpcServer: Fastify, Connect, the error and
 * auth interceptors) answers grpc.health.v1.Health/Check; the client is the services' own balanced
 * Connect transport (createNetworkTransport, h2c, binary). The same exchange over bare node:http2
 * is the floor. BENCH_HOP_CALLS (default 3000) sequential calls each; prints wall time per call and
 * the CPU time each side spent. Then BENCH_HOP_SPACED (default 400) calls 20 ms apart, as calls
 * come at one connection when a model answers between them: both processes are idle before each
 * call, and every write wakes the other side (its median wall time).
 */
import { type ChildProcess, fork } from "node:child_process";
import { createServer as createHttp2Server, connect as http2Connect } from "node:http2";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { createClient } from "@connectrpc/connect";
import { createInternalTokens } from "@kiln/kit/auth";
import { createLogger } from "@kiln/kit/logger";
import { buildRpcServer, defineService } from "@kiln/kit/rpc/server";
import { createNetworkTransport } from "@kiln/kit/rpc/transport";
import { Health } from "@kiln/proto/health";

const CALLS = Number(process.env.BENCH_HOP_CALLS ?? 3000);
const SPACED = Number(process.env.BENCH_HOP_SPACED ?? 400);
const SPACING_MS = 20;
const cpuMs = () => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1000;
};

/** The server side: prints nothing, sends its port, answers "cpu" with its CPU time so far. */
async function serve(kind: string): Promise<void> {
  let port: number;
  if (kind === "kiln") {
    const logger = createLogger({ level: "warn", name: "hop" });
    const service = defineService({
      name: "hop",
      logger,
      register: () => {},
      readiness: [],
      auth: {
        tokens: createInternalTokens("x".repeat(32)),
        verifyApiKey: async () => {
          throw new Error("no keys here");
        },
      },
    });
    const { app } = await buildRpcServer(service);
    await app.listen({ port: 0, host: "127.0.0.1" });
    port = (app.server.address() as { port: number }).port;
  } else {
    const server = createHttp2Server((req, res) => {
      req.resume();
      req.on("end", () => res.end());
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    port = (server.address() as { port: number }).port;
  }
  process.on("message", (m) => {
    if (m === "cpu") process.send?.({ cpu: cpuMs() });
  });
  process.send?.({ port });
}

async function measure(kind: string, label: string, makeCall: (url: string) => () => Promise<unknown>) {
  const child: ChildProcess = fork(fileURLToPath(import.meta.url), [kind], { execArgv: ["--import", "tsx"] });
  const ask = <T>(message?: string) =>
    new Promise<T>((resolve) => {
      child.once("message", (m) => resolve(m as T));
      if (message) child.send(message);
    });
  const { port } = await ask<{ port: number }>();
  const call = makeCall(`http://127.0.0.1:${port}`);
  for (let i = 0; i < 500; i++) await call();
  const server0 = (await ask<{ cpu: number }>("cpu")).cpu;
  const client0 = cpuMs();
  const t0 = performance.now();
  for (let i = 0; i < CALLS; i++) await call();
  const wall = (performance.now() - t0) / CALLS;
  const client = (cpuMs() - client0) / CALLS;
  const server = ((await ask<{ cpu: number }>("cpu")).cpu - server0) / CALLS;
  const spaced: number[] = [];
  for (let i = 0; i < SPACED; i++) {
    await sleep(SPACING_MS);
    const start = performance.now();
    await call();
    spaced.push(performance.now() - start);
  }
  spaced.sort((a, b) => a - b);
  const spacedP50 = spaced[Math.floor(spaced.length / 2)] ?? Number.NaN;
  child.kill();
  return `| ${label} | ${wall.toFixed(2)} | ${client.toFixed(2)} | ${server.toFixed(2)} | ${spacedP50.toFixed(2)} |`;
}

const role = process.argv[2];
if (role) await serve(role);
else {
  const rows = [
    await measure("kiln", "Connect unary, kit server + createNetworkTransport", (url) => {
      const client = createClient(Health, createNetworkTransport({ baseUrl: url, interceptors: [] }).transport);
      return () => client.check({});
    }),
    await measure("raw", "bare node:http2 request/response", (url) => {
      const session = http2Connect(url);
      return () =>
        new Promise<void>((resolve, reject) => {
          const req = session.request({ ":method": "POST", ":path": "/x" });
          req.on("data", () => {});
          req.on("end", resolve);
          req.on("error", reject);
          req.end();
        });
    }),
  ];
  process.stdout.write(
    `\n${CALLS} sequential calls each, then ${SPACED} calls ${SPACING_MS} ms apart\n\n| hop | wall ms per call | client CPU ms | server CPU ms | median ms per call, ${SPACING_MS} ms apart |\n|---|---:|---:|---:|---:|\n${rows.join("\n")}\n`,
  );
  process.exit(0);
}
