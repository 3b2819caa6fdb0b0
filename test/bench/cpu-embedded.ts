/**
 * `pnpm bench:cpu-embedded`: the CPU time `pnpm start` (the compiled launcher, one process) spends
 * per prompt run (POST /api/prompts/:id/run, local/echo, API key), read from /proc/<pid>/stat around
 * BENCH_ROUNDS (default 3) rounds of BENCH_SECONDS (default 5) at BENCH_CONNECTIONS (default 10)
 * connections, after a warm-up. CPU per request moves less between runs on a shared host than
 * requests per second do: run it on two commits in turn (A, B, A, B) to compare them.
 * BENCH_CPU_PROF=<dir> writes the process's CPU profile there (`node --cpu-prof`) when it stops.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runIdentityFlow } from "../support/identity-flow.js";
import { startKilnProcess } from "../support/kiln-process.js";
import { BENCH, load, publishedPrompt, ROOT } from "./load.js";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const TICK_MS = 10; // USER_HZ is 100 on Linux

/** User + system CPU time of a process, in ms. */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
}

execFileSync(process.execPath, ["scripts/build.mjs"], { cwd: ROOT, stdio: "inherit" });
const dir = await mkdtemp(join(tmpdir(), "kiln-cpu-"));
const profileDir = process.env.BENCH_CPU_PROF;
const kiln = await startKilnProcess(
  join(dir, "data"),
  {},
  { compiled: true, nodeArgs: profileDir ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : [] },
);
try {
  const pid = kiln.child.pid as number;
  const flow = await runIdentityFlow(kiln.base);
  const promptId = await publishedPrompt(kiln.base, flow, "local/echo");
  const url = `${kiln.base}/api/prompts/${promptId}/run`;
  const init = {
    method: "POST" as const,
    headers: { authorization: `Bearer ${flow.apiKey}`, "content-type": "application/json" },
    body: JSON.stringify({ organizationId: flow.organizationId, variables: { city: "Paris" } }),
  };
  await load(url, init, 3); // warm-up: caches and JIT
  console.log(`| round | req/s | requests | CPU µs per request | errors |\n|---:|---:|---:|---:|---:|`);
  for (let round = 1; round <= ROUNDS; round++) {
    const before = cpuMs(pid);
    const r = await load(url, init, BENCH.seconds, BENCH.connections);
    const perRequest = ((cpuMs(pid) - before) / r.total) * 1000;
    console.log(`| ${round} | ${r.rps} | ${r.total} | ${perRequest.toFixed(0)} | ${r.errors} |`);
  }
} finally {
  kiln.child.kill("SIGTERM");
  await kiln.exited;
  await rm(dir, { recursive: true, force: true });
}
