/**
 * `pnpm bench:limits`: requests at the largest documented limits (docs/api.md "Limits"), 16 at a
 * time, against each mode as it ships (BENCH_MODES, default "embedded,distributed": `pnpm start`'s
 * process, the image's processes with its heap flags), reporting each process's peak V8 heap as a
 * ratio to its heap limit, its peak resident memory, and the slowest /healthz answer meanwhile.
 * BENCH_LIMITS_ROUNDS (default 3) rounds of each kind. The figures are in docs/operations.md,
 * "Memory headroom".
 */
import type { ChildProcess } from "node:child_process";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LIMITS } from "@kiln/kit/limits";
import { createTestClient } from "@kiln/testing/test-client";
import { startKilnProcess } from "../support/kiln-process.js";
import { bundleOfSize, sized } from "../support/sized.js";
import { ROOT, startBenchPlatform, startStubProcess } from "./load.js";

const ROUNDS = Number(process.env.BENCH_LIMITS_ROUNDS ?? 3);
const modes = (process.env.BENCH_MODES ?? "embedded,distributed").split(",");
const CONCURRENCY = 16;

function peakRssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8").split("\n");
  return Math.round(Number(status.find((l) => l.startsWith("VmHWM:"))?.replace(/\D+/g, "") ?? 0) / 1024);
}

interface Kind {
  name: string;
  request: () => Promise<{ status: number }>;
}

async function kindsFor(base: string): Promise<Kind[]> {
  const api = createTestClient(base);
  const { accessToken: token } = await api.signUp();
  const { organization } = await api.onboard(token);
  const organizationId = organization.id;
  const post = (path: string, body: unknown) => api.post(path, body, { token });
  const { prompt } = await api.createPublishedPrompt(token, organizationId, {
    systemPrompt: "Summarize {{doc}}",
    variablesSchema: { type: "object", properties: { doc: { type: "string" } } },
    model: "local/echo",
  });
  const bare = await api.createPrompt(token, organizationId);
  const skill = await api.createSkill(token, organizationId);
  const version = {
    systemPrompt: `{{doc}}\n${"The assistant answers in full sentences. ".repeat(LIMITS.promptTextChars / 41).slice(0, LIMITS.promptTextChars - 8)}`,
    developerPrompt: "v".repeat(LIMITS.promptTextChars),
    variablesSchema: sized(LIMITS.jsonSchemaBytes, (pad) => ({
      type: "object",
      description: pad,
      properties: { doc: { type: "string" } },
    })),
    responseFormat: sized(LIMITS.jsonSchemaBytes, (pad) => ({
      type: "json_schema",
      schema: { type: "object", description: pad },
    })),
  };
  const variables = sized(LIMITS.variablesBytes, (pad) => ({ doc: pad }));
  const cases = Array.from({ length: 4 }, () => ({
    input: sized(LIMITS.variablesBytes - 2_000, (pad) => ({ doc: pad })),
  }));
  const importText = JSON.stringify(bundleOfSize(LIMITS.importBytes).bundle);
  const importPath = `/api/organizations/${organizationId}/import?dryRun=true`;
  return [
    {
      name: "prompt versions (2 × 100,000 characters, 2 × 64 KiB schemas)",
      request: () => post(`/api/prompts/${bare.id}/versions`, version),
    },
    {
      name: "runs (256 KiB variables)",
      request: () => post(`/api/prompts/${prompt.id}/run`, { organizationId, variables }),
    },
    {
      name: "case batches (4 × 254 KiB inputs, ~1 MiB)",
      request: () => post(`/api/skills/${skill.id}/evaluation-cases`, { organizationId, cases }),
    },
    {
      name: `imports (${(importText.length / 1048576).toFixed(2)} MiB bundles, dry run)`,
      request: () =>
        api.request("POST", importPath, {
          token,
          rawBody: importText,
          headers: { "content-type": "application/json" },
        }),
    },
  ];
}

async function measure(mode: string, base: string, processes: [string, ChildProcess][], peakDir: string) {
  const kinds = await kindsFor(base);
  const rows: string[] = [];
  let worstHealth = 0;
  for (const kind of kinds) {
    const statuses: Record<number, number> = {};
    const t0 = performance.now();
    for (let round = 0; round < ROUNDS; round++) {
      let done = false;
      const probe = (async () => {
        while (!done) {
          const h0 = performance.now();
          await fetch(`${base}/healthz`);
          worstHealth = Math.max(worstHealth, performance.now() - h0);
          await new Promise((r) => setTimeout(r, 50));
        }
      })();
      const answers = await Promise.all(Array.from({ length: CONCURRENCY }, () => kind.request()));
      done = true;
      await probe;
      for (const a of answers) statuses[a.status] = (statuses[a.status] ?? 0) + 1;
    }
    rows.push(`| ${kind.name} | ${JSON.stringify(statuses)} | ${Math.round(performance.now() - t0)} |`);
    process.stderr.write(`${mode}: ${kind.name} done\n`);
  }
  await new Promise((r) => setTimeout(r, 500));
  const peaks = new Map<number, { peakUsed: number; limit: number }>();
  for (const f of await readdir(peakDir)) {
    const p = JSON.parse(await readFile(join(peakDir, f), "utf8")) as { pid: number; peakUsed: number; limit: number };
    peaks.set(p.pid, p);
  }
  const mb = (b: number) => (b / 1048576).toFixed(1);
  process.stdout.write(
    `\n${mode}: ${ROUNDS} rounds of ${CONCURRENCY} concurrent requests of each kind\n\n` +
      "| requests | statuses | ms |\n|---|---|---:|\n" +
      `${rows.join("\n")}\n\nslowest /healthz meanwhile: ${worstHealth.toFixed(0)} ms\n\n` +
      "| process | peak heap used MB | heap limit MB | peak / limit | peak RSS MB | alive |\n|---|---:|---:|---:|---:|---|\n" +
      processes
        .map(([name, child]) => {
          const p = peaks.get(child.pid ?? 0);
          const alive = child.exitCode === null;
          return `| ${name} | ${p ? mb(p.peakUsed) : "?"} | ${p ? mb(p.limit) : "?"} | ${p ? (p.peakUsed / p.limit).toFixed(2) : "?"} | ${alive ? peakRssMb(child.pid ?? 0) : "-"} | ${alive ? "yes" : "NO"} |`;
        })
        .join("\n") +
      "\n",
  );
}

const peakDir = await mkdtemp(join(tmpdir(), "kiln-heap-peak-"));
process.env.NODE_OPTIONS =
  `${process.env.NODE_OPTIONS ?? ""} --import=${join(ROOT, "test/bench/heap-peak.mjs")}`.trim();
process.env.KILN_HEAP_PEAK_DIR = peakDir;
const stub = await startStubProcess(50);
try {
  if (modes.includes("embedded")) {
    execFileSync(process.execPath, ["scripts/build.mjs"], { cwd: ROOT, stdio: "inherit" });
    const dir = await mkdtemp(join(tmpdir(), "kiln-limits-"));
    const kiln = await startKilnProcess(join(dir, "data"), {}, { compiled: true });
    try {
      await measure("embedded (pnpm start)", kiln.base, [["kiln", kiln.child]], peakDir);
    } finally {
      kiln.child.kill("SIGTERM");
      await kiln.exited;
      await rm(dir, { recursive: true, force: true });
    }
  }
  if (modes.includes("distributed")) {
    await rm(peakDir, { recursive: true, force: true });
    await mkdir(peakDir);
    const bench = await startBenchPlatform(stub.baseUrl);
    try {
      const p = bench.platform.processes;
      await measure(
        "distributed (the image's processes)",
        bench.platform.gatewayUrl,
        [
          ["gateway", p.gateway],
          ["identity", p.identity],
          ["catalog", p.catalog],
          ["execution", p.execution],
          ["evaluation", p.evaluation],
        ],
        peakDir,
      );
    } finally {
      await bench.stop();
    }
  }
} finally {
  stub.child.kill("SIGTERM");
  await rm(peakDir, { recursive: true, force: true });
}
