/**
 * `pnpm bench:cache`: what a response cache hit adds to a prompt run (docs/cache.md). `pnpm start`
 * as a process of its own (the embedded store on a data directory), the run route called
 * sequentially on one connection: a run of local/echo (no provider on the network, the cheapest
 * run there is), then the same prompt's hits (`Kiln-Cache: ttl=3600`, answered from the cache, no
 * model call). The hit's added latency is the difference of the medians (negative: a hit is
 * cheaper than the cheapest model). Then the cache's own work in this process: the key's hash and
 * the read of a hit, against the in-memory store. BENCH_CACHE_REQUESTS (default 2000) each.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { createLogger } from "@kiln/kit/logger";
import { createMemoryStore } from "@kiln/kit/store/memory";
import { createResponseCache } from "../../services/execution/src/cache/response-cache.js";
import { responseKeyOf } from "../../services/execution/src/cache/response-key.js";
import { runIdentityFlow } from "../support/identity-flow.js";
import { startKilnProcess } from "../support/kiln-process.js";
import { publishedPrompt, sequential } from "./load.js";

const REQUESTS = Number(process.env.BENCH_CACHE_REQUESTS ?? 2000);
const ms = (n: number) => `${n.toFixed(3)} ms`;

async function overHttp(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "kiln-bench-cache-"));
  const kiln = await startKilnProcess(join(dir, "data"), { RATE_LIMIT_PER_MINUTE: "0" });
  try {
    const flow = await runIdentityFlow(kiln.base, ["prompts:read", "runs:write"]);
    const id = await publishedPrompt(kiln.base, flow, "local/echo");
    const url = `${kiln.base}/api/prompts/${id}/run`;
    const body = JSON.stringify({ organizationId: flow.organizationId, variables: { city: "Lisbon" } });
    const headers = { authorization: `Bearer ${flow.apiKey}`, "content-type": "application/json" };
    const init = (extra: Record<string, string>) => ({
      method: "POST" as const,
      headers: { ...headers, ...extra },
      body,
    });
    // Warm both paths (and keep the entry the hits read).
    await sequential(url, init({}), { requests: 200 });
    await sequential(url, init({ "kiln-cache": "ttl=3600" }), { requests: 200 });
    const probe = await fetch(url, init({ "kiln-cache": "ttl=3600" }));
    if (probe.headers.get("kiln-cache-status") !== "hit") throw new Error("the cached run is not a hit");
    const echo = await sequential(url, init({}), { requests: REQUESTS });
    const hit = await sequential(url, init({ "kiln-cache": "ttl=3600" }), { requests: REQUESTS });
    console.log(`| path | p50 | p99 | errors |\n|---|---|---|---|`);
    console.log(`| run, local/echo | ${ms(echo.p50)} | ${ms(echo.p99)} | ${echo.errors} |`);
    console.log(`| run, cache hit | ${ms(hit.p50)} | ${ms(hit.p99)} | ${hit.errors} |`);
    console.log(`a hit's added latency (p50 difference): ${ms(hit.p50 - echo.p50)}`);
  } finally {
    kiln.child.kill("SIGTERM");
    await kiln.exited;
    await rm(dir, { recursive: true, force: true });
  }
}

async function inProcess(): Promise<void> {
  const cache = createResponseCache(createMemoryStore(), createLogger({ name: "bench", level: "silent" }));
  const input = {
    organizationId: "org_bench",
    promptVersionId: "pv_bench",
    model: "stub/m",
    messages: [{ role: "system" as const, content: "Summarize the weather in Lisbon in one sentence." }],
    tools: [],
    responseFormat: { type: "text" as const },
    parameters: { temperature: 0.2, maxOutputTokens: 256 },
  };
  const answer = { text: "Sunny. ".repeat(40) };
  const key = responseKeyOf(input);
  await cache.keep(
    "org_bench",
    key,
    {
      output: answer,
      provider: "stub",
      model: "m",
      usage: { inputTokens: 10, outputTokens: 50 },
      costUsd: 0.0001,
      sourceRunId: "run_x",
    },
    3600,
  );
  const times: number[] = [];
  for (let i = 0; i < REQUESTS * 5; i++) {
    const t = performance.now();
    await cache.lookup("org_bench", responseKeyOf(input), 3600);
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.floor(q * (times.length - 1))] ?? 0;
  console.log(`the cache's own work on a hit (key hash + in-memory read): p50 ${ms(at(0.5))}, p99 ${ms(at(0.99))}`);
}

await inProcess();
await overHttp();
