/**
 * What the benchmark scripts share: the load generator's settings and its one call, the model stub
 * as a process of its own, and the provider configuration pointing at it.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { Agent, request } from "node:http";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createTestClient } from "@kiln/testing/test-client";
import autocannon from "autocannon";
import { type Distributed, startDistributed } from "../support/distributed.js";
import { call } from "../support/identity-flow.js";
import { type RunningServer, startFerretDb, startNatsServer } from "../support/servers.js";

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** BENCH_SECONDS (default 10) and BENCH_CONNECTIONS (default 10). */
/** User + system CPU time of a process (its threads included), in ms, from /proc/<pid>/stat. */
export function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // utime and stime, in clock ticks: USER_HZ is 100 on Linux.
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

export const BENCH = {
  seconds: Number(process.env.BENCH_SECONDS ?? 10),
  connections: Number(process.env.BENCH_CONNECTIONS ?? 10),
};

export interface LoadResult {
  rps: number;
  total: number;
  p50: number;
  p90: number;
  p99: number;
  /** Failed connections, timeouts and answers outside 2xx. */
  errors: number;
}

/** One autocannon run with BENCH's connections, for BENCH.seconds unless told otherwise. */
export async function load(
  url: string,
  init: { method: "GET" | "POST"; headers: Record<string, string>; body?: string },
  seconds = BENCH.seconds,
  connections = BENCH.connections,
): Promise<LoadResult> {
  const r = await autocannon({ url, connections, duration: seconds, ...init });
  return {
    rps: Math.round(r.requests.average),
    total: r.requests.total,
    p50: r.latency.p50,
    p90: r.latency.p90,
    p99: r.latency.p99,
    errors: r.errors + r.non2xx,
  };
}

/**
 * Requests one after the other over one keep-alive connection (node:http), each timed with
 * `performance.now()`, until `seconds` have passed or `requests` have been sent: latency at one
 * connection to the hundredth of a millisecond, where autocannon's histogram keeps whole
 * milliseconds (its lowest discernible value is 1: 52.9 ms counts as 52). A bound of 2 ms added
 * latency is not judged on such a scale. Non-2xx answers count as errors.
 */
export async function sequential(
  url: string,
  init: { method: "GET" | "POST"; headers: Record<string, string>; body?: string },
  until: { seconds?: number; requests?: number },
): Promise<LoadResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const once = () =>
    new Promise<boolean>((resolve, reject) => {
      const req = request(url, { method: init.method, headers: init.headers, agent }, (res) => {
        res.resume();
        res.on("end", () => resolve((res.statusCode ?? 0) >= 200 && (res.statusCode ?? 0) < 300));
      });
      req.on("error", reject);
      req.end(init.body);
    });
  const times: number[] = [];
  let errors = 0;
  const started = performance.now();
  const endAt = until.seconds === undefined ? Number.POSITIVE_INFINITY : started + until.seconds * 1000;
  try {
    while (performance.now() < endAt && times.length + errors < (until.requests ?? Number.POSITIVE_INFINITY)) {
      const t = performance.now();
      if (await once()) times.push(performance.now() - t);
      else errors++;
    }
  } finally {
    agent.destroy();
  }
  times.sort((a, b) => a - b);
  const pct = (q: number) => Math.round((times[Math.floor(q * (times.length - 1))] ?? 0) * 100) / 100;
  return {
    rps: Math.round((times.length * 1000) / (performance.now() - started)),
    total: times.length + errors,
    p50: pct(0.5),
    p90: pct(0.9),
    p99: pct(0.99),
    errors,
  };
}

/**
 * The OpenAI-protocol stub in a process of its own (test/bench/stub-process.ts): a provider is
 * another machine, so it must not share an event loop with the load generator.
 */
export async function startStubProcess(latencyMs: number): Promise<{ baseUrl: string; child: ChildProcess }> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", join(ROOT, "test/bench/stub-process.ts"), String(latencyMs)],
    {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  const baseUrl = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk;
      const line = out.split("\n")[0];
      if (out.includes("\n") && line) resolve(line);
    });
    child.once("exit", (code) => reject(new Error(`the stub process exited (${code})`)));
  });
  return { baseUrl, child };
}

/** OPENAI_COMPATIBLE_PROVIDERS with one priced model, `stub/fixed`, answered by the stub. */
export const stubProviders = (stubUrl: string) =>
  JSON.stringify([
    {
      id: "stub",
      baseUrl: stubUrl,
      models: [{ model: "fixed", inputPerMTokUsd: 0.15, outputPerMTokUsd: 0.6, tools: true, jsonSchema: true }],
    },
  ]);

/**
 * The organization's provider connection "bench" to the stub (openai_compatible, its model "fixed"),
 * so that "bench/fixed" runs through a connection; the process must allow the stub's host
 * (PROVIDER_PRIVATE_HOSTS).
 */
export async function benchConnection(base: string, flow: { token: string; organizationId: string }, stubUrl: string) {
  const created = await call(base, "POST", "/api/provider-connections", {
    token: flow.token,
    body: {
      organizationId: flow.organizationId,
      name: "bench",
      provider: "openai_compatible",
      baseUrl: stubUrl,
      models: [{ model: "fixed", inputPerMTokUsd: 0.15, outputPerMTokUsd: 0.6 }],
    },
  });
  if (created.status !== 201) throw new Error(`connection refused: ${JSON.stringify(created.body)}`);
  return "bench/fixed";
}

/** A published prompt of `model` whose one variable is `city`; its id. */
export async function publishedPrompt(
  base: string,
  flow: { token: string; organizationId: string },
  model: string,
): Promise<string> {
  const { prompt } = await createTestClient(base).createPublishedPrompt(
    flow.token,
    flow.organizationId,
    {
      systemPrompt: "Summarize the weather in {{city}} in one sentence.",
      variablesSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
      model,
    },
    { name: `bench ${model}` },
  );
  return prompt.id;
}

/**
 * The distributed platform for a benchmark: its own FerretDB and nats-server, every process logging
 * warnings only, no rate limit, the models of `stubProviders(stubUrl)`. `stop()` removes the data.
 */
export async function startBenchPlatform(
  stubUrl: string,
  nodeArgsOf?: Record<string, string[]>,
): Promise<{ platform: Distributed; ferret: RunningServer; nats: RunningServer; stop(): Promise<void> }> {
  execFileSync(process.execPath, ["scripts/build.mjs"], { cwd: ROOT, stdio: "inherit" });
  const [ferret, nats] = await Promise.all([startFerretDb(), startNatsServer()]);
  const servers = [ferret, nats];
  try {
    const platform = await startDistributed({
      mongoUrl: ferret.url,
      natsUrl: nats.url,
      logLevel: "warn",
      env: {
        RATE_LIMIT_PER_MINUTE: "0",
        // More than the Free plan's 1,000 runs a month in one organization.
        FREE_PLAN_MONTHLY_RUN_LIMIT: "0",
        OPENAI_COMPATIBLE_PROVIDERS: stubProviders(stubUrl),
      },
      // What the image runs: the built launcher (BENCH_RUNTIME=tsx: the sources through tsx, to compare).
      compiled: process.env.BENCH_RUNTIME !== "tsx",
      nodeArgsOf,
    });
    return {
      platform,
      ferret,
      nats,
      async stop() {
        await platform.stop();
        await Promise.all(servers.map((s) => s.stop({ removeData: true })));
      },
    };
  } catch (e) {
    await Promise.all(servers.map((s) => s.stop({ removeData: true })));
    throw e;
  }
}
