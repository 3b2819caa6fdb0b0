/**
 * `pnpm bench:cpu-embedded`: the CPU time `pnpm start` (the compiled launcher, one process) spends
 * per prompt run (POST /api/prompts/:id/run, local/echo, API key), read from /proc/<pid>/stat around
 * BENCH_ROUNDS (default 3) rounds of BENCH_SECONDS (default 5) at BENCH_CONNECTIONS (default 10)
 * connections, after a warm-up. CPU per request moves less between runs on a shared host than
 * requests per second do: run it on two commits in turn (A, B, A, B) to compare them.
 * BENCH_CPU_PROF=<dir> writes the process's CPU profile there (`node --cpu-prof`) when it stops.
 * BENCH_COMPARE="RUN_TRACES=off;RUN_TRACES=on" compares environments in the same run: one process
 * per environment (`;` between them, `,` between a process's variables), their rounds alternated
 * (A, B, A, B), so the host's load falls on both alike. BENCH_CPU_CONNECTION=1 instead runs one
 * process against the OpenAI-protocol stub (50 ms) and alternates the same prompt on the
 * deployment's provider ("stub/fixed") and through an organization's provider connection
 * ("bench/fixed"), the stub's process measured apart. BENCH_SOURCES=1 runs the sources through tsx
 * instead of the compiled launcher (slower, but a profile then names every function and file);
 * BENCH_NODE_ARGS="--flag …" go to node before `pnpm start`'s own flags (a V8 flag given twice: the
 * last wins, so `pnpm start`'s heap bounds hold unless changed in package.json).
 */
import { execFileSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout } from "node:timers/promises";
import { runIdentityFlow } from "../support/identity-flow.js";
import { startKilnProcess } from "../support/kiln-process.js";
import { BENCH, benchConnection, cpuMs, load, publishedPrompt, ROOT, startStubProcess, stubProviders } from "./load.js";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const COMPILED = process.env.BENCH_SOURCES !== "1";
const PROFILE_ARGS = [
  ...(process.env.BENCH_CPU_PROF ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : []),
  ...(process.env.BENCH_NODE_ARGS ?? "").split(" ").filter(Boolean),
];
const SETTLE_MS = 1_000;

/** One started process per compared environment (one with none when nothing is compared). */
interface Variant {
  name: string;
  pid: number;
  url: string;
  init: { method: "POST"; headers: Record<string, string>; body: string };
  stop: () => Promise<void>;
}

const environments = (process.env.BENCH_COMPARE ?? "").split(";").filter((e) => e.trim() !== "");
const envOf = (text: string) =>
  Object.fromEntries(text.split(",").map((pair) => pair.trim().split("=") as [string, string]));

async function start(name: string, env: Record<string, string>): Promise<Variant> {
  const dir = await mkdtemp(join(tmpdir(), "kiln-cpu-"));
  const kiln = await startKilnProcess(join(dir, "data"), env, { compiled: COMPILED, nodeArgs: PROFILE_ARGS });
  const flow = await runIdentityFlow(kiln.base);
  const promptId = await publishedPrompt(kiln.base, flow, "local/echo");
  return {
    name,
    pid: kiln.child.pid as number,
    url: `${kiln.base}/api/prompts/${promptId}/run`,
    init: {
      method: "POST",
      headers: { authorization: `Bearer ${flow.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ organizationId: flow.organizationId, variables: { city: "Paris" } }),
    },
    async stop() {
      kiln.child.kill("SIGTERM");
      await kiln.exited;
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** One process, two variants: the stub's model through the deployment's provider and through a connection. */
async function startConnectionPair(stubUrl: string): Promise<Variant[]> {
  const dir = await mkdtemp(join(tmpdir(), "kiln-cpu-"));
  const env = {
    OPENAI_COMPATIBLE_PROVIDERS: stubProviders(stubUrl),
    PROVIDER_PRIVATE_HOSTS: new URL(stubUrl).hostname,
  };
  const kiln = await startKilnProcess(join(dir, "data"), env, { compiled: COMPILED, nodeArgs: PROFILE_ARGS });
  const flow = await runIdentityFlow(kiln.base);
  const connectionModel = await benchConnection(kiln.base, flow, stubUrl);
  const variantOf = async (name: string, model: string, stop: () => Promise<void>): Promise<Variant> => ({
    name,
    pid: kiln.child.pid as number,
    url: `${kiln.base}/api/prompts/${await publishedPrompt(kiln.base, flow, model)}/run`,
    init: {
      method: "POST",
      headers: { authorization: `Bearer ${flow.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ organizationId: flow.organizationId, variables: { city: "Paris" } }),
    },
    stop,
  });
  const stopAll = async () => {
    kiln.child.kill("SIGTERM");
    await kiln.exited;
    await rm(dir, { recursive: true, force: true });
  };
  return [
    await variantOf("deployment provider", "stub/fixed", async () => {}),
    await variantOf("connection", connectionModel, stopAll),
  ];
}

execFileSync(process.execPath, ["scripts/build.mjs"], { cwd: ROOT, stdio: "inherit" });
const variants: Variant[] = [];
const stub = process.env.BENCH_CPU_CONNECTION === "1" ? await startStubProcess(50) : undefined;
try {
  if (stub) variants.push(...(await startConnectionPair(stub.baseUrl)));
  else for (const e of environments.length > 0 ? environments : [""]) variants.push(await start(e, e ? envOf(e) : {}));
  for (const v of variants) await load(v.url, v.init, 3); // warm-up: caches and JIT
  console.log(`| round | env | req/s | requests | CPU µs per request | errors |\n|---:|---|---:|---:|---:|---:|`);
  for (let round = 1; round <= ROUNDS; round++) {
    for (const v of variants) {
      const before = cpuMs(v.pid);
      const r = await load(v.url, v.init, BENCH.seconds, BENCH.connections);
      // What the process does in the background for these requests (a batch of run traces, written
      // within 250 ms of a run) is theirs too: read the CPU once it is done.
      await setTimeout(SETTLE_MS);
      const perRequest = ((cpuMs(v.pid) - before) / r.total) * 1000;
      console.log(`| ${round} | ${v.name || "-"} | ${r.rps} | ${r.total} | ${perRequest.toFixed(0)} | ${r.errors} |`);
    }
  }
} finally {
  for (const v of variants) await v.stop();
  stub?.child.kill("SIGTERM");
}
