/**
 * `pnpm bench:models`: what `GET /v1/models` and resolving a `kiln/…` model for a run cost in an
 * organization with many prompts (docs/openai-compatible.md "Models"), against `pnpm start` (the
 * compiled launcher, embedded mode, one process of its own, on loopback). It creates
 * BENCH_MODELS_PROMPTS prompts (default 200), each with a published version and the label `canary`
 * (every other one also `beta`), then times BENCH_MODELS_LISTS sequential `GET /v1/models` (default
 * 30) and BENCH_MODELS_RUNS sequential chat completions (default 200, model `local/echo`) naming
 * `kiln/<id>`, `kiln/<id>@canary` and `kiln/<name>`: wall time per call (mean, p50, p99).
 * BENCH_MODELS_OUT=<file> also writes the rows as JSON, so that two runs (before and after a change)
 * can be set side by side: BENCH_MODELS_BEFORE=<file> prints after ÷ before per row.
 */
import { execFileSync } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Kiln } from "@kiln/sdk";
import { runIdentityFlow } from "../support/identity-flow.js";
import { startKilnProcess } from "../support/kiln-process.js";
import { ROOT } from "./load.js";

const PROMPTS = Number(process.env.BENCH_MODELS_PROMPTS ?? 200);
const LISTS = Number(process.env.BENCH_MODELS_LISTS ?? 30);
const RUNS = Number(process.env.BENCH_MODELS_RUNS ?? 200);

interface Row {
  what: string;
  meanMs: number;
  p50Ms: number;
  p99Ms: number;
}

/** `calls` sequential calls of `fn` after a few warm-up calls, each timed. */
async function measure(what: string, calls: number, fn: () => Promise<void>): Promise<Row> {
  for (let i = 0; i < Math.min(5, calls); i++) await fn();
  const times: number[] = [];
  for (let i = 0; i < calls; i++) {
    const t0 = performance.now();
    await fn();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))] ?? 0;
  return { what, meanMs: times.reduce((a, b) => a + b, 0) / calls, p50Ms: at(0.5), p99Ms: at(0.99) };
}

const ms = (v: number) => (v >= 10 ? v.toFixed(1) : v.toFixed(2));

execFileSync(process.execPath, ["scripts/build.mjs"], { cwd: ROOT, stdio: "inherit" });
const dir = await mkdtemp(join(tmpdir(), "kiln-models-"));
const server = await startKilnProcess(join(dir, "data"), {}, { compiled: true });
try {
  const flow = await runIdentityFlow(server.base, ["prompts:read", "skills:read", "runs:write"]);
  const { organizationId } = flow;
  const owner = new Kiln({ baseUrl: server.base, accessToken: flow.token });
  const made: { id: string; name: string }[] = [];
  const setUp0 = performance.now();
  for (let i = 0; i < PROMPTS; i++) {
    const name = `bench-model-${i}`;
    const prompt = await owner.prompts.create({ organizationId, name, defaultModel: "local/echo" });
    const version = await owner.prompts.createVersion(prompt.id, {
      systemPrompt: `Prompt ${i}: echo {{text}}.`,
      variablesSchema: { type: "object", properties: { text: { type: "string" } } },
    });
    await owner.prompts.publish(prompt.id, { versionId: version.id });
    await owner.prompts.labels.set(prompt.id, "canary", version.id);
    if (i % 2 === 0) await owner.prompts.labels.set(prompt.id, "beta", version.id);
    made.push({ id: prompt.id, name });
  }
  console.log(`set-up: ${PROMPTS} prompts in ${((performance.now() - setUp0) / 1000).toFixed(1)} s`);

  const headers = { authorization: `Bearer ${flow.apiKey}`, "content-type": "application/json" };
  let listed = 0;
  const list = async () => {
    const res = await fetch(`${server.base}/v1/models`, { headers });
    if (res.status !== 200) throw new Error(`GET /v1/models: ${res.status} ${await res.text()}`);
    listed = ((await res.json()) as { data: unknown[] }).data.length;
  };
  // The first prompt created is the last one listed (newest first): the longest walk of a listing.
  const oldest = made[0];
  if (!oldest) throw new Error("no prompts");
  const chat = (model: string) => async () => {
    const res = await fetch(`${server.base}/v1/chat/completions`, {
      method: "POST",
      headers,
      body: JSON.stringify({ model, messages: [{ role: "user", content: "hi" }], variables: { text: "hi" } }),
    });
    if (res.status !== 200) throw new Error(`POST /v1/chat/completions ${model}: ${res.status} ${await res.text()}`);
    await res.arrayBuffer();
  };

  const rows: Row[] = [];
  rows.push(await measure(`GET /v1/models (${PROMPTS} prompts)`, LISTS, list));
  rows.push(await measure("chat, kiln/<id>", RUNS, chat(`kiln/${oldest.id}`)));
  rows.push(await measure("chat, kiln/<id>@canary", RUNS, chat(`kiln/${oldest.id}@canary`)));
  rows.push(await measure("chat, kiln/<name>", RUNS, chat(`kiln/${oldest.name}`)));

  console.log(`\n${listed} models listed; ${LISTS} listings, ${RUNS} runs per chat row\n`);
  console.log("| call | mean ms | p50 ms | p99 ms |\n|---|---:|---:|---:|");
  for (const r of rows) console.log(`| ${r.what} | ${ms(r.meanMs)} | ${ms(r.p50Ms)} | ${ms(r.p99Ms)} |`);
  const [, byId, byLabel] = rows;
  if (byId && byLabel) console.log(`\nkiln/<id>@canary ÷ kiln/<id> (p50): ${(byLabel.p50Ms / byId.p50Ms).toFixed(2)}`);

  if (process.env.BENCH_MODELS_OUT) await writeFile(process.env.BENCH_MODELS_OUT, JSON.stringify(rows, null, 2));
  if (process.env.BENCH_MODELS_BEFORE) {
    const before = JSON.parse(await readFile(process.env.BENCH_MODELS_BEFORE, "utf8")) as Row[];
    console.log("\n| call | p50 after ÷ before | p99 after ÷ before | mean after ÷ before |\n|---|---:|---:|---:|");
    for (const r of rows) {
      const b = before.find((x) => x.what === r.what);
      if (!b) continue;
      const ratio = (a: number, z: number) => (a / z).toFixed(3);
      console.log(
        `| ${r.what} | ${ratio(r.p50Ms, b.p50Ms)} | ${ratio(r.p99Ms, b.p99Ms)} | ${ratio(r.meanMs, b.meanMs)} |`,
      );
    }
  }
} finally {
  server.child.kill("SIGTERM");
  await server.exited;
  await rm(dir, { recursive: true, force: true });
}
