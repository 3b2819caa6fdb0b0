/**
 * `pnpm bench`: load runs against the platform in both modes, as real processes on this machine,
 * with autocannon in this process. Prints a table of throughput and latency percentiles.
 *
 * Scenarios: an authenticated POST /api/setup/verify (access token, API key); POST
 * /api/prompts/:id/run with local/echo; the same against an OpenAI-protocol stub with a fixed
 * 50 ms latency, and the stub called directly, so the platform's added latency is the difference.
 * BENCH_SECONDS (default 10) and BENCH_CONNECTIONS (default 10) tune the runs; BENCH_MODES
 * (default "embedded,distributed") picks the modes.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { cpus, totalmem } from "node:os";
import { join } from "node:path";
import { call, runIdentityFlow } from "../support/identity-flow.js";
import { freePort } from "../support/servers.js";
import {
  BENCH,
  type LoadResult,
  load,
  publishedPrompt,
  ROOT,
  startBenchPlatform,
  startStubProcess,
  stubProviders,
} from "./load.js";

const modes = new Set((process.env.BENCH_MODES ?? "embedded,distributed").split(","));

interface Row extends LoadResult {
  mode: string;
  scenario: string;
}

const STUB_LATENCY_MS = 50;

async function scenarios(mode: string, base: string): Promise<Row[]> {
  const flow = await runIdentityFlow(base);
  const body = JSON.stringify({ organizationId: flow.organizationId });
  const rows: Row[] = [];
  // Warm caches and JIT before measuring.
  for (let i = 0; i < 200; i++)
    await call(base, "POST", "/api/setup/verify", { token: flow.token, body: { organizationId: flow.organizationId } });
  for (const [scenario, credential] of [
    ["POST /api/setup/verify (access token)", flow.token],
    ["POST /api/setup/verify (API key)", flow.apiKey],
  ] as const) {
    const r = await load(`${base}/api/setup/verify`, {
      method: "POST",
      headers: { authorization: `Bearer ${credential}`, "content-type": "application/json" },
      body,
    });
    rows.push({ mode, scenario, ...r });
  }
  for (const model of ["local/echo", "stub/fixed"]) {
    const promptId = await publishedPrompt(base, flow, model);
    const url = `${base}/api/prompts/${promptId}/run`;
    const init = {
      method: "POST" as const,
      headers: { authorization: `Bearer ${flow.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ organizationId: flow.organizationId, variables: { city: "Paris" } }),
    };
    const warm = await fetch(url, init);
    if (warm.status !== 201) throw new Error(`run failed: ${await warm.text()}`);
    const label = model === "local/echo" ? "local/echo" : `OpenAI-protocol stub (${STUB_LATENCY_MS} ms)`;
    rows.push({ mode, scenario: `POST /api/prompts/:id/run, ${label}`, ...(await load(url, init)) });
  }
  return rows;
}

async function startEmbeddedProcess(stubUrl: string): Promise<{ base: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(process.execPath, ["--import", "tsx", join(ROOT, "launcher/src/main.ts"), "embedded"], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: "127.0.0.1",
      LOG_LEVEL: "warn",
      RATE_LIMIT_PER_MINUTE: "0",
      OPENAI_COMPATIBLE_PROVIDERS: stubProviders(stubUrl),
    },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 300; i++) {
    try {
      if ((await fetch(`${base}/readyz`)).ok) return { base, child };
    } catch {
      // starting
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill();
  throw new Error("embedded mode did not start");
}

const rows: Row[] = [];
const stub = await startStubProcess(STUB_LATENCY_MS);
const direct = await load(`${stub.baseUrl}/chat/completions`, {
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({ model: "fixed", messages: [{ role: "system", content: "Summarize the weather in Paris." }] }),
});
rows.push({ mode: "direct", scenario: `OpenAI-protocol stub called directly (${STUB_LATENCY_MS} ms)`, ...direct });
if (modes.has("embedded")) {
  const embedded = await startEmbeddedProcess(stub.baseUrl);
  try {
    rows.push(...(await scenarios("embedded", embedded.base)));
  } finally {
    embedded.child.kill("SIGTERM");
  }
}

if (modes.has("distributed")) {
  const bench = await startBenchPlatform(stub.baseUrl);
  try {
    rows.push(...(await scenarios("distributed", bench.platform.gatewayUrl)));
  } finally {
    await bench.stop();
  }
}
stub.child.kill("SIGTERM");

const stubRow = (mode: string) => rows.find((r) => r.mode === mode && r.scenario.includes("stub ("));

const cpu = cpus()[0]?.model ?? "unknown CPU";
process.stdout.write(
  `\n${cpus().length} × ${cpu}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}; ` +
    `${BENCH.connections} connections × ${BENCH.seconds} s per scenario\n\n` +
    "| mode | scenario | req/s | p50 ms | p90 ms | p99 ms | errors |\n|---|---|---:|---:|---:|---:|---:|\n" +
    rows
      .map((r) => `| ${r.mode} | ${r.scenario} | ${r.rps} | ${r.p50} | ${r.p90} | ${r.p99} | ${r.errors} |`)
      .join("\n") +
    "\n\nAdded latency of a prompt run over the stub called directly:\n\n| mode | p50 ms | p99 ms |\n|---|---:|---:|\n" +
    ["embedded", "distributed"]
      .map((mode) => {
        const r = stubRow(mode);
        return r ? `| ${mode} | ${r.p50 - direct.p50} | ${r.p99 - direct.p99} |` : `| ${mode} | n/a | n/a |`;
      })
      .join("\n") +
    "\n",
);
