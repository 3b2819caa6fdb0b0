/**
 * `pnpm bench`: load runs against the platform in both modes, as real processes on this machine,
 * with autocannon in this process. Prints a table of throughput and latency percentiles.
 *
 * Scenarios: an authenticated POST /api/setup/verify (access token, API key); POST
 * /api/prompts/:id/run with local/echo; the same against an OpenAI-protocol stub with a fixed
 * 50 ms latency, and the stub called directly, so the platform's added latency is the difference.
 * BENCH_SECONDS (default 10) and BENCH_CONNECTIONS (default 10) tune the runs; BENCH_MODES
 * (default "embedded,distributed") picks the modes. Then, side by side in the same run: the stub
 * called directly, Portkey's open-source gateway passing through to it (test/bench/portkey.ts), and
 * a Kiln prompt run in each mode, at 1 connection (latency: sequential requests timed to 0.01 ms,
 * load.ts `sequential`) and at each of BENCH_LEVELS connections (default "16,64,256": throughput
 * and latency percentiles, autocannon), each Kiln row as
 * ratios to Portkey's throughput and to the stub's latency. The three are measured in turn
 * BENCH_ROUNDS times (default 3) beside each mode, and each cell is the median of its rounds; in
 * the embedded mode a fourth row runs the same prompt through an organization's provider connection
 * to the same stub, and its throughput is printed as a ratio to the deployment provider's row.
 */

import { execFileSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { cpus, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { call, runIdentityFlow } from "../support/identity-flow.js";
import { startKilnProcess } from "../support/kiln-process.js";
import {
  BENCH,
  benchConnection,
  type LoadResult,
  load,
  publishedPrompt,
  ROOT,
  sequential,
  startBenchPlatform,
  startStubProcess,
  stubProviders,
} from "./load.js";
import { PORTKEY_VERSION, portkeyHeaders, startPortkey } from "./portkey.js";

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

/** `pnpm start` as it runs: the compiled launcher on a data directory of its own. */
async function startEmbeddedProcess(stubUrl: string): Promise<{ base: string; stop(): Promise<void> }> {
  execFileSync(process.execPath, ["scripts/build.mjs"], { cwd: ROOT, stdio: "inherit" });
  const dir = await mkdtemp(join(tmpdir(), "kiln-bench-"));
  const kiln = await startKilnProcess(
    join(dir, "data"),
    // The stub's host allowed for an organization's connection too (the connection row).
    { OPENAI_COMPATIBLE_PROVIDERS: stubProviders(stubUrl), PROVIDER_PRIVATE_HOSTS: new URL(stubUrl).hostname },
    { compiled: true },
  );
  return {
    base: kiln.base,
    async stop() {
      kiln.child.kill("SIGTERM");
      await kiln.exited;
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The connection counts throughput is measured at, besides latency at one. */
const LEVELS = (process.env.BENCH_LEVELS ?? "16,64,256").split(",").map(Number);
/** The level the headline ratio is read at: the largest. */
const TOP = Math.max(...LEVELS);

interface AtLevel {
  rps: number;
  p50: number;
  p99: number;
}

interface SideBySide {
  target: string;
  /** At 1 connection. */
  p50: number;
  p99: number;
  /** At TOP connections. */
  rps: number;
  errors: number;
  /** By connection count. */
  levels: Map<number, AtLevel>;
}

type Target = [name: string, url: string, init: Parameters<typeof load>[1]];

/** After a run at 256 connections, the processes' leftover work (closing sockets, GC) settles first. */
const SETTLE_MS = 2_000;
const settle = () => sleep(SETTLE_MS);

/** BENCH_ROUNDS (default 3): how many times each target of a comparison is measured, in turn. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)] as number;
};

/**
 * The stub, Portkey and one Kiln target measured in turn, ROUNDS times, each row the median of its
 * rounds (errors summed): on a shared VM one 5-second run of the same gateway varies by half from
 * the next, so a ratio is taken between rows measured side by side, not minutes apart.
 */
async function interleaved(targets: Target[]): Promise<SideBySide[]> {
  const rounds: SideBySide[][] = targets.map(() => []);
  for (let round = 0; round < ROUNDS; round++) {
    // Latency at 1 connection of each, then throughput at 256 of each: no latency is measured
    // while another target is still busy with a load run.
    const latencies = [];
    for (const [, url, init] of targets) latencies.push(await sequential(url, init, { seconds: BENCH.seconds }));
    for (const [i, [target, url, init]] of targets.entries()) {
      const one = latencies[i] as LoadResult;
      const levels = new Map<number, AtLevel>();
      let errors = one.errors;
      for (const connections of LEVELS) {
        const many = await load(url, init, BENCH.seconds, connections);
        await settle();
        levels.set(connections, { rps: many.rps, p50: many.p50, p99: many.p99 });
        errors += many.errors;
      }
      rounds[i]?.push({ target, p50: one.p50, p99: one.p99, rps: levels.get(TOP)?.rps ?? 0, errors, levels });
    }
  }
  return rounds.map((measured, i) => ({
    target: targets[i]?.[0] ?? "",
    p50: median(measured.map((m) => m.p50)),
    p99: median(measured.map((m) => m.p99)),
    rps: median(measured.map((m) => m.rps)),
    errors: measured.reduce((sum, m) => sum + m.errors, 0),
    levels: new Map(
      LEVELS.map((c) => {
        const at = measured.map((m) => m.levels.get(c) as AtLevel);
        return [
          c,
          { rps: median(at.map((a) => a.rps)), p50: median(at.map((a) => a.p50)), p99: median(at.map((a) => a.p99)) },
        ];
      }),
    ),
  }));
}

/**
 * A prompt run of Kiln on the stub's model, with an API key: what the comparison calls. With
 * `viaConnection`, the model is the same stub reached through an organization's provider
 * connection ("bench/fixed") instead of the deployment's configured provider ("stub/fixed").
 */
async function kilnRun(name: string, base: string, viaConnection?: { stubUrl: string }): Promise<Target> {
  const flow = await runIdentityFlow(base);
  let model = "stub/fixed";
  if (viaConnection) {
    model = await benchConnection(base, flow, viaConnection.stubUrl);
  }
  const promptId = await publishedPrompt(base, flow, model);
  return [
    name,
    `${base}/api/prompts/${promptId}/run`,
    {
      method: "POST",
      headers: { authorization: `Bearer ${flow.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ organizationId: flow.organizationId, variables: { city: "Paris" } }),
    },
  ];
}

const rows: Row[] = [];
/** Per mode: the stub, Portkey and Kiln, measured in turn. */
const compared = new Map<string, SideBySide[]>();
const stub = await startStubProcess(STUB_LATENCY_MS);
const chat = JSON.stringify({
  model: "fixed",
  messages: [{ role: "system", content: "Summarize the weather in Paris." }],
});
const directInit = { method: "POST" as const, headers: { "content-type": "application/json" }, body: chat };
const direct = await load(`${stub.baseUrl}/chat/completions`, directInit);
rows.push({ mode: "direct", scenario: `OpenAI-protocol stub called directly (${STUB_LATENCY_MS} ms)`, ...direct });
const portkey = await startPortkey();
const references: Target[] = [
  ["stub called directly", `${stub.baseUrl}/chat/completions`, directInit],
  [
    `Portkey gateway ${PORTKEY_VERSION}, pass-through`,
    `${portkey.base}/v1/chat/completions`,
    { method: "POST", headers: portkeyHeaders(stub.baseUrl), body: chat },
  ],
];
try {
  if (modes.has("embedded")) {
    const embedded = await startEmbeddedProcess(stub.baseUrl);
    try {
      rows.push(...(await scenarios("embedded", embedded.base)));
      const kiln = await kilnRun("Kiln embedded (pnpm start)", embedded.base);
      const viaConnection = await kilnRun("Kiln embedded, through a provider connection", embedded.base, {
        stubUrl: stub.baseUrl,
      });
      compared.set("embedded", await interleaved([...references, kiln, viaConnection]));
    } finally {
      await embedded.stop();
    }
  }

  if (modes.has("distributed")) {
    const bench = await startBenchPlatform(stub.baseUrl);
    try {
      rows.push(...(await scenarios("distributed", bench.platform.gatewayUrl)));
      const kiln = await kilnRun("Kiln distributed (FerretDB, NATS)", bench.platform.gatewayUrl);
      compared.set("distributed", await interleaved([...references, kiln]));
    } finally {
      await bench.stop();
    }
  }
} finally {
  portkey.child.kill("SIGTERM");
  stub.child.kill("SIGTERM");
}

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

// The comparison: each Kiln row as ratios to the Portkey row and the stub row measured beside it.
process.stdout.write(
  `\nSide by side (POST /api/prompts/:id/run with an API key vs. a Chat Completions call): latency at 1 connection (sequential requests on one keep-alive connection, timed to 0.01 ms), throughput at ${TOP} connections (autocannon), ${BENCH.seconds} s each; the stub, Portkey and Kiln measured in turn, ${ROUNDS} rounds, each cell the median of its rounds\n\n` +
    "| mode | target | p50 ms | p99 ms | req/s | errors | req/s ÷ Portkey | added p50 ms | added p99 ms |\n" +
    "|---|---|---:|---:|---:|---:|---:|---:|---:|\n" +
    [...compared]
      .flatMap(([mode, [direct, portkeyRow, ...kiln]]) =>
        [direct, portkeyRow, ...kiln].map((r) => {
          if (!r || !direct || !portkeyRow) return "";
          const ratio = portkeyRow.rps > 0 ? (r.rps / portkeyRow.rps).toFixed(2) : "n/a";
          const ms = (x: number) => x.toFixed(1);
          return `| ${mode} | ${r.target} | ${ms(r.p50)} | ${ms(r.p99)} | ${r.rps} | ${r.errors} | ${ratio} | ${ms(r.p50 - direct.p50)} | ${ms(r.p99 - direct.p99)} |`;
        }),
      )
      .join("\n") +
    "\n",
);

// The run path through an organization's connection beside the deployment's provider (same stub, same run).
const embeddedRows = compared.get("embedded");
const [deploymentRow, connectionRow] = embeddedRows?.slice(2) ?? [];
if (deploymentRow && connectionRow && deploymentRow.rps > 0) {
  process.stdout.write(
    `\nThrough a provider connection ÷ through the deployment's provider (embedded, ${TOP} connections): ` +
      `${(connectionRow.rps / deploymentRow.rps).toFixed(2)}× throughput, ` +
      `${(connectionRow.p50 - deploymentRow.p50).toFixed(2)} ms p50 and ${(connectionRow.p99 - deploymentRow.p99).toFixed(2)} ms p99 difference at 1 connection\n`,
  );
}

// The same rows at each connection count: throughput, its ratio to Portkey's, and latency under that load.
process.stdout.write(
  `\nBy connections (the shape of the published gateway benchmarks): req/s (÷ Portkey) and p50 / p99 ms under load, ${LEVELS.join(", ")} connections\n\n` +
    `| mode | target | ${LEVELS.map((c) => `${c} conn.`).join(" | ")} |\n|---|---|${LEVELS.map(() => "---:").join("|")}|\n` +
    [...compared]
      .flatMap(([mode, [direct, portkeyRow, ...kiln]]) =>
        [direct, portkeyRow, ...kiln].map((r) => {
          if (!r || !portkeyRow) return "";
          const cells = LEVELS.map((c) => {
            const at = r.levels.get(c);
            const theirs = portkeyRow.levels.get(c);
            if (!at || !theirs) return "n/a";
            const ratio = theirs.rps > 0 ? ` (${(at.rps / theirs.rps).toFixed(2)})` : "";
            return `${at.rps}${ratio}, ${at.p50.toFixed(1)} / ${at.p99.toFixed(1)}`;
          });
          return `| ${mode} | ${r.target} | ${cells.join(" | ")} |`;
        }),
      )
      .join("\n") +
    "\n",
);
