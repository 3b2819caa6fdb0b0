/**
 * `pnpm bench:soak`: BENCH_SOAK_MINUTES (default 10) of steady load — prompt runs on the
 * OpenAI-protocol stub at BENCH_CONNECTIONS (default 10) connections — against each mode in turn
 * (BENCH_MODES, default "embedded,distributed"), reporting every process's resident memory (VmRSS,
 * and its own anonymous part) at the end of each minute: memory must be flat, not grow with runs.
 */
import type { ChildProcess } from "node:child_process";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runIdentityFlow } from "../support/identity-flow.js";
import { startKilnProcess } from "../support/kiln-process.js";
import { BENCH, load, publishedPrompt, ROOT, startBenchPlatform, startStubProcess, stubProviders } from "./load.js";

const MINUTES = Number(process.env.BENCH_SOAK_MINUTES ?? 10);
const modes = (process.env.BENCH_MODES ?? "embedded,distributed").split(",");

function rssMb(pid: number): { total: number; anon: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8").split("\n");
  const mb = (field: string) =>
    Math.round(Number(status.find((l) => l.startsWith(`${field}:`))?.replace(/\D+/g, "") ?? 0) / 1024);
  return { total: mb("VmRSS"), anon: mb("RssAnon") };
}

async function soak(mode: string, base: string, processes: [string, ChildProcess][]): Promise<void> {
  const flow = await runIdentityFlow(base);
  const promptId = await publishedPrompt(base, flow, "stub/fixed");
  const init = {
    method: "POST" as const,
    headers: { authorization: `Bearer ${flow.apiKey}`, "content-type": "application/json" },
    body: JSON.stringify({ organizationId: flow.organizationId, variables: { city: "Paris" } }),
  };
  const samples: { minute: number; rps: number; errors: number; rss: { total: number; anon: number }[] }[] = [];
  for (let minute = 1; minute <= MINUTES; minute++) {
    const r = await load(`${base}/api/prompts/${promptId}/run`, init, 60);
    samples.push({ minute, rps: r.rps, errors: r.errors, rss: processes.map(([, p]) => rssMb(p.pid ?? 0)) });
    process.stderr.write(`${mode}: minute ${minute}/${MINUTES}, ${r.rps} req/s\n`);
  }
  process.stdout.write(
    `\n${mode}: ${MINUTES} min of prompt runs at ${BENCH.connections} connections; RSS MB (anon MB) at the end of each minute\n\n` +
      `| minute | req/s | errors | ${processes.map(([name]) => name).join(" | ")} |\n` +
      `|---:|---:|---:|${processes.map(() => "---:").join("|")}|\n` +
      samples
        .map(
          (s) => `| ${s.minute} | ${s.rps} | ${s.errors} | ${s.rss.map((r) => `${r.total} (${r.anon})`).join(" | ")} |`,
        )
        .join("\n") +
      "\n",
  );
}

const stub = await startStubProcess(50);
try {
  if (modes.includes("embedded")) {
    execFileSync(process.execPath, ["scripts/build.mjs"], { cwd: ROOT, stdio: "inherit" });
    const dir = await mkdtemp(join(tmpdir(), "kiln-soak-"));
    const kiln = await startKilnProcess(
      join(dir, "data"),
      { OPENAI_COMPATIBLE_PROVIDERS: stubProviders(stub.baseUrl) },
      { compiled: true },
    );
    try {
      await soak("embedded (pnpm start)", kiln.base, [["kiln", kiln.child]]);
    } finally {
      kiln.child.kill("SIGTERM");
      await kiln.exited;
      await rm(dir, { recursive: true, force: true });
    }
  }
  if (modes.includes("distributed")) {
    const bench = await startBenchPlatform(stub.baseUrl);
    try {
      const p = bench.platform.processes;
      await soak("distributed", bench.platform.gatewayUrl, [
        ["gateway", p.gateway],
        ["identity", p.identity],
        ["catalog", p.catalog],
        ["execution", p.execution],
        ["evaluation", p.evaluation],
      ]);
    } finally {
      await bench.stop();
    }
  }
} finally {
  stub.child.kill("SIGTERM");
}
