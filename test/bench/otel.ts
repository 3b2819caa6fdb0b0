/**
 * `pnpm bench:otel`: OTLP trace ingestion side by side with the run path (docs/observability.md
 * "Scale"). Kiln is `pnpm start` (the compiled launcher, one process, SQLite), then the distributed
 * platform (compiled, FerretDB, NATS); BENCH_OTEL_MODES picks ("embedded,distributed"). In each:
 * the run path alone (prompt runs of local/echo, BENCH_CONNECTIONS connections, default 10) for
 * BENCH_OTEL_SECONDS (default 10), then the same run load while BENCH_OTEL_EXPORTERS exporters
 * (default 2, each one request at a time like the SDK's batch processor) post protobuf batches of
 * BENCH_OTEL_SPANS spans (default 256; traces of 8 spans with GenAI attributes) to /otel/v1/traces
 * as fast as they are acknowledged. Reports spans/s acknowledged and errors, the acknowledgement
 * latency (p50, p99), runs/s with ÷ without ingestion, and the resident memory of each process.
 * The two phases alternate BENCH_OTEL_ROUNDS times (default 2); the ratio is over all rounds. Then
 * ingestion alone, with no run load (the idle share's throughput).
 * BENCH_OTEL_CPU_PROF=<dir> profiles the embedded process (a .cpuprofile written when it stops).
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create, toBinary } from "@bufbuild/protobuf";
import { AnyValueSchema, type KeyValue, KeyValueSchema } from "@kiln/proto/otlp/common";
import { ExportTraceServiceRequestSchema } from "@kiln/proto/otlp/trace-service";
import { runIdentityFlow } from "../support/identity-flow.js";
import { startKilnProcess } from "../support/kiln-process.js";
import { BENCH, load, publishedPrompt, ROOT, startBenchPlatform } from "./load.js";

const SECONDS = Number(process.env.BENCH_OTEL_SECONDS ?? 10);
const EXPORTERS = Number(process.env.BENCH_OTEL_EXPORTERS ?? 2);
const SPANS = Number(process.env.BENCH_OTEL_SPANS ?? 256);
const MODES = (process.env.BENCH_OTEL_MODES ?? "embedded,distributed").split(",");
const ROUNDS = Number(process.env.BENCH_OTEL_ROUNDS ?? 2);
const SPANS_PER_TRACE = 8;

const attr = (key: string, v: string | number): KeyValue =>
  create(KeyValueSchema, {
    key,
    value: create(AnyValueSchema, {
      value: typeof v === "string" ? { case: "stringValue", value: v } : { case: "intValue", value: BigInt(v) },
    }),
  });

let sequence = 0;
/** One export request: fresh trace and span ids, a root and its model calls per trace. */
function exportBody(): { body: Uint8Array; lastTraceId: string } {
  const now = BigInt(Date.now()) * 1_000_000n;
  const spans = [];
  let traceId = Buffer.alloc(16);
  let rootId = Buffer.alloc(8);
  for (let i = 0; i < SPANS; i++) {
    sequence++;
    if (i % SPANS_PER_TRACE === 0) {
      traceId = Buffer.alloc(16);
      traceId.writeUInt32BE(process.pid, 0);
      traceId.writeDoubleBE(sequence, 8);
    }
    const spanId = Buffer.alloc(8);
    spanId.writeDoubleBE(sequence);
    const root = i % SPANS_PER_TRACE === 0;
    if (root) rootId = spanId;
    spans.push({
      traceId,
      spanId,
      parentSpanId: root ? new Uint8Array() : rootId,
      name: root ? "checkout" : "chat gpt-4o-mini",
      kind: root ? 2 : 3,
      startTimeUnixNano: now,
      endTimeUnixNano: now + 5_000_000n,
      attributes: root
        ? [attr("http.route", "/checkout")]
        : [
            attr("gen_ai.operation.name", "chat"),
            attr("gen_ai.provider.name", "openai"),
            attr("gen_ai.request.model", "gpt-4o-mini"),
            attr("gen_ai.usage.input_tokens", 120),
            attr("gen_ai.usage.output_tokens", 40),
          ],
    });
  }
  const body = toBinary(
    ExportTraceServiceRequestSchema,
    create(ExportTraceServiceRequestSchema, {
      resourceSpans: [{ resource: { attributes: [attr("service.name", "bench-app")] }, scopeSpans: [{ spans }] }],
    }),
  );
  return { body, lastTraceId: traceId.toString("hex") };
}

interface Ingested {
  spans: number;
  requests: number;
  errors: number;
  seconds: number;
  p50: number;
  p99: number;
  lastTraceId: string;
}

/** EXPORTERS loops posting batches until `stop()` is called; each waits for its acknowledgement. */
function startExporters(url: string, apiKey: string) {
  let stopped = false;
  const latencies: number[] = [];
  let spans = 0;
  let errors = 0;
  let lastTraceId = "";
  const started = performance.now();
  const exporter = async () => {
    while (!stopped) {
      const { body, lastTraceId: last } = exportBody();
      const t = performance.now();
      try {
        const r = await fetch(url, {
          method: "POST",
          headers: { "content-type": "application/x-protobuf", authorization: `Bearer ${apiKey}` },
          body,
        });
        await r.arrayBuffer();
        latencies.push(performance.now() - t);
        if (r.ok) {
          spans += SPANS;
          lastTraceId = last;
        } else errors++;
      } catch {
        errors++;
      }
    }
  };
  const running = Array.from({ length: EXPORTERS }, exporter);
  return async (): Promise<Ingested> => {
    stopped = true;
    await Promise.all(running);
    const seconds = (performance.now() - started) / 1000;
    latencies.sort((a, b) => a - b);
    const pct = (q: number) => Math.round(latencies[Math.floor(q * (latencies.length - 1))] ?? 0);
    return { spans, requests: latencies.length, errors, seconds, p50: pct(0.5), p99: pct(0.99), lastTraceId };
  };
}

/** Resident memory (MB) now and at its peak, per process. */
function memoryOf(pids: Record<string, number>): string {
  return Object.entries(pids)
    .map(([name, pid]) => {
      const status = readFileSync(`/proc/${pid}/status`, "utf8");
      const mb = (key: string) => Math.round(Number(new RegExp(`${key}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) / 1024);
      return `${name} ${mb("VmRSS")} (peak ${mb("VmHWM")})`;
    })
    .join(", ");
}

async function measure(mode: string, base: string, pids: Record<string, number>): Promise<void> {
  const flow = await runIdentityFlow(base, ["prompts:read", "runs:write", "traces:write", "traces:read"]);
  const promptId = await publishedPrompt(base, flow, "local/echo");
  const runUrl = `${base}/api/prompts/${promptId}/run`;
  const init = {
    method: "POST" as const,
    headers: { authorization: `Bearer ${flow.apiKey}`, "content-type": "application/json" },
    body: JSON.stringify({ organizationId: flow.organizationId, variables: { city: "Paris" } }),
  };
  const otlpUrl = `${base}/otel/v1/traces`;
  // Warm-up of both paths: caches and JIT.
  const warm = startExporters(otlpUrl, flow.apiKey);
  await load(runUrl, init, SECONDS);
  await warm();

  console.log(`\n### ${mode}\n`);
  console.log(
    "| round | phase | runs/s | run p99 ms | run errors | spans/s | OTLP requests | OTLP errors | ack p50 ms | ack p99 ms |",
  );
  console.log("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|");
  // Alone, then with ingestion, ROUNDS times: a machine that slows down in one phase shows as one
  // round's outlier instead of the whole ratio.
  let sumAlone = 0;
  let sumWith = 0;
  const ratios: string[] = [];
  let memoryAlone = "";
  let memoryWith = "";
  let lastTraceId = "";
  for (let round = 1; round <= ROUNDS; round++) {
    const alone = await load(runUrl, init, SECONDS);
    memoryAlone = memoryOf(pids);
    const stop = startExporters(otlpUrl, flow.apiKey);
    const together = await load(runUrl, init, SECONDS);
    const ingested = await stop();
    memoryWith = memoryOf(pids);
    lastTraceId = ingested.lastTraceId || lastTraceId;
    sumAlone += alone.rps;
    sumWith += together.rps;
    ratios.push((together.rps / alone.rps).toFixed(2));
    console.log(`| ${round} | run path alone | ${alone.rps} | ${alone.p99} | ${alone.errors} | | | | | |`);
    console.log(
      `| ${round} | with ingestion | ${together.rps} | ${together.p99} | ${together.errors} | ${Math.round(ingested.spans / ingested.seconds)} | ${ingested.requests} | ${ingested.errors} | ${ingested.p50} | ${ingested.p99} |`,
    );
  }
  // Ingestion with no run load: what the idle share (TRACE_INGEST_IDLE_SHARE) lets through.
  const quiet = startExporters(otlpUrl, flow.apiKey);
  await new Promise((resolve) => setTimeout(resolve, SECONDS * 1000));
  const only = await quiet();
  const memoryOnly = memoryOf(pids);
  lastTraceId = only.lastTraceId || lastTraceId;
  console.log(
    `| | ingestion alone | | | | ${Math.round(only.spans / only.seconds)} | ${only.requests} | ${only.errors} | ${only.p50} | ${only.p99} |`,
  );
  // Acknowledged means stored: the last acknowledged trace reads back.
  const last = await fetch(`${base}/api/traces/${lastTraceId}`, {
    headers: { authorization: `Bearer ${flow.apiKey}` },
  });
  const stored = last.status === 200 && ((await last.json()) as { spans: unknown[] }).spans.length === SPANS_PER_TRACE;
  console.log(
    `\nruns/s with ÷ without ingestion: ${(sumWith / sumAlone).toFixed(2)} over ${ROUNDS} rounds (${ratios.join(", ")}; target ≥ 0.90)`,
  );
  console.log(`last acknowledged trace stored and readable: ${stored}`);
  console.log(`RSS MB, run path alone: ${memoryAlone}`);
  console.log(`RSS MB, with ingestion: ${memoryWith}`);
  console.log(`RSS MB, ingestion alone: ${memoryOnly}`);
}

console.log(
  `OTLP ingestion beside the run path: ${SECONDS} s per phase, ${BENCH.connections} run connections, ${EXPORTERS} exporters × ${SPANS} spans per request`,
);
if (MODES.includes("embedded")) {
  execFileSync(process.execPath, ["scripts/build.mjs"], { cwd: ROOT, stdio: "inherit" });
  const dir = await mkdtemp(join(tmpdir(), "kiln-otel-"));
  // BENCH_OTEL_CPU_PROF=<dir>: the process writes a V8 CPU profile there when it stops.
  const profile = process.env.BENCH_OTEL_CPU_PROF;
  const nodeArgs = profile ? ["--cpu-prof", `--cpu-prof-dir=${profile}`] : [];
  const kiln = await startKilnProcess(join(dir, "data"), {}, { compiled: true, nodeArgs });
  try {
    await measure("embedded (pnpm start, SQLite)", kiln.base, { kiln: kiln.child.pid as number });
  } finally {
    kiln.child.kill("SIGTERM");
    await kiln.exited;
    await rm(dir, { recursive: true, force: true });
  }
}
if (MODES.includes("distributed")) {
  // No model provider is called (local/echo): the stub's address is never dialled.
  const bench = await startBenchPlatform("http://127.0.0.1:9/v1");
  try {
    const pids: Record<string, number> = {};
    for (const [name, p] of Object.entries(bench.platform.processes)) pids[name] = p.pid as number;
    pids.ferretdb = bench.ferret.process.pid as number;
    pids["nats-server"] = bench.nats.process.pid as number;
    await measure("distributed (FerretDB, NATS)", bench.platform.gatewayUrl, pids);
  } finally {
    await bench.stop();
  }
}
