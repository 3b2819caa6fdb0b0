/**
 * `pnpm bench:stream`: how much later the first streamed token reaches a caller through Kiln's
 * `/v1/chat/completions` than straight from the provider. A provider stub (@kiln/testing/
 * openai-stub, in this process) streams BENCH_STREAM_CHUNKS (default 20) content chunks
 * BENCH_STREAM_DELAY_MS (default 25) apart; Kiln is `pnpm start` (the compiled launcher, a process
 * of its own, loopback), then the distributed platform (compiled, FerretDB, NATS; BENCH_STREAM_MODES
 * picks: "embedded,distributed"), with the stub as a provider. The `openai` SDK (6.49.0) calls, in turns,
 * Kiln with a managed prompt and the stub directly, BENCH_STREAM_RUNS (default 200) times each,
 * sequentially. For every run the stub records when it wrote its first content chunk; the client
 * notes, on the stub's clock, when that chunk's text came out of the SDK's iterator. The gap is the
 * time to first chunk after the provider's first chunk, the same run's: through Kiln it is the
 * provider → execution → gateway → client path, direct it is the client's own reading. Also the
 * time from the request to the first chunk (wall, including the stub's first delay) and to the end.
 */
import { execFileSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startOpenAIStub, stubReply } from "@kiln/testing/openai-stub";
import { createTestClient } from "@kiln/testing/test-client";
import OpenAI from "openai";
import { runIdentityFlow } from "../support/identity-flow.js";
import { startKilnProcess } from "../support/kiln-process.js";
import { ROOT, startBenchPlatform, stubProviders } from "./load.js";

const RUNS = Number(process.env.BENCH_STREAM_RUNS ?? 200);
const CHUNKS = Number(process.env.BENCH_STREAM_CHUNKS ?? 20);
const DELAY_MS = Number(process.env.BENCH_STREAM_DELAY_MS ?? 25);
const WARMUP = 20;

const content = Array.from({ length: CHUNKS }, (_, i) => `w${i} `).join("");
const stub = await startOpenAIStub({
  chunkDelayMs: DELAY_MS,
  recordRequests: false,
  respond: () => stubReply.text(content),
});

interface Sample {
  /** Provider's first content chunk written → its text out of the client's iterator. */
  gapMs: number;
  /** Request sent → first content text (includes the stub's first delay). */
  firstMs: number;
  /** Request sent → the stream's end. */
  totalMs: number;
}

async function sample(client: OpenAI, model: string): Promise<Sample> {
  const before = stub.streams.length;
  const t0 = stub.now();
  const stream = await client.chat.completions.create({
    model,
    messages: [{ role: "user", content: "count" }],
    stream: true,
    stream_options: { include_usage: true },
  });
  let firstAt = -1;
  let text = "";
  for await (const chunk of stream) {
    const piece = chunk.choices[0]?.delta?.content;
    if (piece && firstAt < 0) firstAt = stub.now();
    text += piece ?? "";
  }
  const end = stub.now();
  const record = stub.streams[before];
  if (!record || text !== content) throw new Error(`unexpected stream (${text.length} characters)`);
  return { gapMs: firstAt - record.firstChunkAtMs, firstMs: firstAt - t0, totalMs: end - t0 };
}

const pct = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
};
const ms = (v: number) => v.toFixed(2);

/** Kiln in each mode, with the stub as its provider (`stub/fixed`). */
const platforms: Record<string, () => Promise<{ base: string; stop(): Promise<void> }>> = {
  "embedded, `pnpm start`": async () => {
    execFileSync(process.execPath, ["scripts/build.mjs"], { cwd: ROOT, stdio: "inherit" });
    const dir = await mkdtemp(join(tmpdir(), "kiln-stream-"));
    const server = await startKilnProcess(
      join(dir, "data"),
      { OPENAI_COMPATIBLE_PROVIDERS: stubProviders(stub.baseUrl) },
      { compiled: true },
    );
    return {
      base: server.base,
      async stop() {
        server.child.kill("SIGTERM");
        await server.exited;
        await rm(dir, { recursive: true, force: true });
      },
    };
  },
  "distributed, FerretDB and NATS": async () => {
    const { platform, stop } = await startBenchPlatform(stub.baseUrl);
    return { base: platform.gatewayUrl, stop };
  },
};
const modes = (process.env.BENCH_STREAM_MODES ?? "embedded,distributed").split(",");

console.log(`\n${RUNS} runs each, ${CHUNKS} chunks ${DELAY_MS} ms apart; Node ${process.version}\n`);
console.log(
  "| path | gap p50 (ms) | gap p99 (ms) | first chunk p50 (ms) | whole stream p50 (ms) | added p50 / p99 (ms) |",
);
console.log("|---|---|---|---|---|---|");
try {
  for (const [name, start] of Object.entries(platforms)) {
    if (!modes.some((m) => name.startsWith(m))) continue;
    const running = await start();
    try {
      const flow = await runIdentityFlow(running.base);
      const { prompt } = await createTestClient(running.base).createPublishedPrompt(flow.token, flow.organizationId, {
        model: "stub/fixed",
        systemPrompt: "Count.",
      });
      const model = `kiln/${prompt.id}`;
      const kiln = new OpenAI({ apiKey: flow.apiKey, baseURL: `${running.base}/v1`, maxRetries: 0 });
      const direct = new OpenAI({ apiKey: "unused", baseURL: stub.baseUrl, maxRetries: 0 });
      const through: Sample[] = [];
      const straight: Sample[] = [];
      for (let i = 0; i < WARMUP; i++) {
        await sample(kiln, model);
        await sample(direct, "fixed");
      }
      for (let i = 0; i < RUNS; i++) {
        through.push(await sample(kiln, model));
        straight.push(await sample(direct, "fixed"));
      }
      const cells = (samples: Sample[]) => {
        const of = (k: keyof Sample) => samples.map((x) => x[k]);
        return `${ms(pct(of("gapMs"), 0.5))} | ${ms(pct(of("gapMs"), 0.99))} | ${ms(pct(of("firstMs"), 0.5))} | ${ms(pct(of("totalMs"), 0.5))}`;
      };
      // Run by run: this run's gap through Kiln less the direct run's that followed it.
      const added = through.map((x, i) => x.gapMs - (straight[i]?.gapMs ?? 0));
      console.log(`| through Kiln (${name}) | ${cells(through)} | ${ms(pct(added, 0.5))} / ${ms(pct(added, 0.99))} |`);
      console.log(`| directly from the stub | ${cells(straight)} | |`);
    } finally {
      await running.stop();
    }
  }
} finally {
  await stub.close();
}
