/**
 * `pnpm bench:cpu`: where a distributed prompt run spends its time. Starts the platform as real
 * processes (FerretDB, nats-server, the four services, the gateway, the OpenAI-protocol stub in a
 * process of its own), sends BENCH_CPU_RUNS (default 1000) sequential runs per scenario, and prints
 * the wall time per run and the CPU time each process spent per run (from /proc/<pid>/stat), so the
 * cost of every hop is a figure rather than a guess. Then the same under load: BENCH_SECONDS
 * (default 10) of autocannon at BENCH_CPU_CONNECTIONS (default 256) connections per scenario, CPU
 * per completed request of each process. BENCH_CPU_PROFILE=<process> (e.g. execution) writes that
 * process's V8 CPU profile into .bench-profiles/ (open it in Chrome DevTools).
 */
import type { ChildProcess } from "node:child_process";
import { join } from "node:path";
import { runIdentityFlow } from "../support/identity-flow.js";
import { BENCH, cpuMs, load, publishedPrompt, ROOT, sequential, startBenchPlatform, startStubProcess } from "./load.js";

const RUNS = Number(process.env.BENCH_CPU_RUNS ?? 1000);
const CONNECTIONS = Number(process.env.BENCH_CPU_CONNECTIONS ?? 256);

const stub = await startStubProcess(50);
const profiled = process.env.BENCH_CPU_PROFILE;
const { platform, ferret, nats, stop } = await startBenchPlatform(
  stub.baseUrl,
  profiled ? { [profiled]: ["--cpu-prof", `--cpu-prof-dir=${join(ROOT, ".bench-profiles")}`] } : undefined,
);
const processes: [string, ChildProcess][] = [
  ["gateway", platform.processes.gateway],
  ["identity", platform.processes.identity],
  ["catalog", platform.processes.catalog],
  ["execution", platform.processes.execution],
  ["evaluation", platform.processes.evaluation],
  ["ferretdb", ferret.process],
  ["nats-server", nats.process],
  ["stub", stub.child],
];
try {
  const base = platform.gatewayUrl;
  const flow = await runIdentityFlow(base);
  // node:http with keep-alive (sequential): fetch costs this machine about 1.2 ms of CPU per
  // request, which would be counted against the processes it shares the cores with.
  const headers = { authorization: `Bearer ${flow.apiKey}`, "content-type": "application/json" };
  const scenarios: [string, string, string][] = [
    [
      "POST /api/setup/verify (API key)",
      `${base}/api/setup/verify`,
      JSON.stringify({ organizationId: flow.organizationId }),
    ],
  ];
  for (const model of ["local/echo", "stub/fixed"]) {
    const promptId = await publishedPrompt(base, flow, model);
    const body = { organizationId: flow.organizationId, variables: { city: "Paris" } };
    scenarios.push([
      `POST /api/prompts/:id/run, ${model}`,
      `${base}/api/prompts/${promptId}/run`,
      JSON.stringify(body),
    ]);
  }
  for (const [scenario, url, body] of scenarios) {
    const init = { method: "POST" as const, headers, body };
    const warm = await sequential(url, init, { requests: 200 });
    const before = processes.map(([, p]) => cpuMs(p.pid ?? 0));
    const self = process.cpuUsage();
    const measured = await sequential(url, init, { requests: RUNS });
    const selfCpu = process.cpuUsage(self);
    const after = processes.map(([, p]) => cpuMs(p.pid ?? 0));
    if (warm.errors + measured.errors > 0) throw new Error(`${scenario}: ${warm.errors + measured.errors} failed`);
    process.stdout.write(
      `\n${scenario}: ${RUNS} sequential runs, wall p50 ${measured.p50.toFixed(1)} ms, p99 ${measured.p99.toFixed(1)} ms\n` +
        "| process | CPU ms per run |\n|---|---:|\n" +
        processes
          .map(([name], i) => `| ${name} | ${(((after[i] ?? 0) - (before[i] ?? 0)) / RUNS).toFixed(2)} |`)
          .join("\n") +
        `\n| load client | ${((selfCpu.user + selfCpu.system) / 1000 / RUNS).toFixed(2)} |\n`,
    );

    // Under load: CPU per completed request at CONNECTIONS connections.
    const loadedBefore = processes.map(([, p]) => cpuMs(p.pid ?? 0));
    const loaded = await load(url, { method: "POST", headers, body }, BENCH.seconds, CONNECTIONS);
    const loadedAfter = processes.map(([, p]) => cpuMs(p.pid ?? 0));
    const done = Math.max(1, loaded.total - loaded.errors);
    process.stdout.write(
      `\n${scenario} under load: ${CONNECTIONS} connections × ${BENCH.seconds} s, ${loaded.rps} req/s, ` +
        `p50 ${loaded.p50} ms, p99 ${loaded.p99} ms, ${loaded.errors} errors\n` +
        "| process | CPU ms per request |\n|---|---:|\n" +
        processes
          .map(([name], i) => `| ${name} | ${(((loadedAfter[i] ?? 0) - (loadedBefore[i] ?? 0)) / done).toFixed(2)} |`)
          .join("\n") +
        "\n",
    );
  }
} finally {
  await stop();
  stub.child.kill("SIGTERM");
}
