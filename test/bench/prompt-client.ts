/**
 * `pnpm bench:prompt-client`: what the SDK's prompt client (`kiln.prompts.resolve`, sdk/README.md
 * "Prompts for your own model calls") costs a caller, against `pnpm start` (the compiled launcher,
 * one process of its own, on loopback). Each row is BENCH_PROMPT_CALLS (default 2 000) sequential
 * calls after a warm-up (cached rows: 100 × as many): wall time per call (mean, p50, p99) and the
 * caller's CPU per call, then the ratio of a cached call to an uncached one. Uncached is
 * `cacheTtlMs: 0` (every call asks the server: one GET by id, two for a label of one's own);
 * cached is the default TTL (no request); stale is a value past its TTL (answered from memory while
 * one background request revalidates it). Also: the first resolve in a process (it loads ajv and
 * Mustache), a name's first resolve on a new client (the list, 200 a page, with BENCH_PROMPTS
 * prompts, default 100), and `render` of a three-variable version.
 */
import { execFileSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Kiln } from "@kiln/sdk";
import { runIdentityFlow } from "../support/identity-flow.js";
import { startKilnProcess } from "../support/kiln-process.js";
import { ROOT } from "./load.js";

const CALLS = Number(process.env.BENCH_PROMPT_CALLS ?? 2_000);
const PROMPTS = Number(process.env.BENCH_PROMPTS ?? 100);

interface Row {
  what: string;
  meanUs: number;
  p50Us: number;
  p99Us: number;
  cpuUs: number;
}

const cpuUs = () => {
  const c = process.cpuUsage();
  return c.user + c.system;
};

/** `calls` sequential calls of `fn`, each timed. */
async function measure(what: string, calls: number, fn: () => Promise<unknown>): Promise<Row> {
  for (let i = 0; i < Math.min(200, calls); i++) await fn();
  const times: number[] = [];
  const cpu0 = cpuUs();
  for (let i = 0; i < calls; i++) {
    const t0 = performance.now();
    await fn();
    times.push((performance.now() - t0) * 1000);
  }
  const cpu = (cpuUs() - cpu0) / calls;
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))] ?? 0;
  const mean = times.reduce((a, b) => a + b, 0) / calls;
  return { what, meanUs: mean, p50Us: at(0.5), p99Us: at(0.99), cpuUs: cpu };
}

const us = (v: number) => (v >= 100 ? v.toFixed(0) : v >= 1 ? v.toFixed(1) : v.toFixed(2));

execFileSync(process.execPath, ["scripts/build.mjs"], { cwd: ROOT, stdio: "inherit" });
const dir = await mkdtemp(join(tmpdir(), "kiln-prompt-client-"));
const server = await startKilnProcess(join(dir, "data"), {}, { compiled: true });
try {
  const flow = await runIdentityFlow(server.base);
  const { organizationId } = flow;
  const owner = new Kiln({ baseUrl: server.base, accessToken: flow.token });
  const prompt = await owner.prompts.create({ organizationId, name: "bench-weather", defaultModel: "local/echo" });
  const version = await owner.prompts.createVersion(prompt.id, {
    systemPrompt: "Summarize the weather in {{city}} for the next {{days}} days, in °{{unit}}.",
    developerPrompt: "One sentence.",
    variablesSchema: {
      type: "object",
      properties: { city: { type: "string" }, days: { type: "integer", minimum: 1 }, unit: { enum: ["C", "F"] } },
      required: ["city"],
    },
  });
  await owner.prompts.publish(prompt.id, { versionId: version.id });
  await owner.prompts.labels.set(prompt.id, "canary", version.id);
  for (let i = 1; i < PROMPTS; i++) await owner.prompts.create({ organizationId, name: `filler-${i}` });

  const kiln = new Kiln({ baseUrl: server.base, apiKey: flow.apiKey });
  const t0 = performance.now();
  await kiln.prompts.resolve(prompt.id, { cacheTtlMs: 0 });
  const firstInProcessMs = performance.now() - t0;

  const names: number[] = [];
  for (let i = 0; i < 20; i++) {
    const fresh = new Kiln({ baseUrl: server.base, apiKey: flow.apiKey });
    const s = performance.now();
    await fresh.prompts.resolve("bench-weather");
    names.push(performance.now() - s);
  }
  names.sort((a, b) => a - b);

  const rows: Row[] = [];
  rows.push(await measure("uncached, by id (1 GET)", CALLS, () => kiln.prompts.resolve(prompt.id, { cacheTtlMs: 0 })));
  rows.push(
    await measure("uncached, by name, label canary (2 GETs)", CALLS, () =>
      kiln.prompts.resolve("bench-weather", { label: "canary", cacheTtlMs: 0 }),
    ),
  );
  rows.push(await measure("cached, by id", CALLS * 100, () => kiln.prompts.resolve(prompt.id)));
  rows.push(
    await measure("cached, by name, label canary", CALLS * 100, () =>
      kiln.prompts.resolve("bench-weather", { label: "canary" }),
    ),
  );
  // Always past its TTL: every call answers from memory; one revalidation at a time runs behind.
  rows.push(await measure("stale (SWR), by id", CALLS * 100, () => kiln.prompts.resolve(prompt.id, { cacheTtlMs: 1 })));
  const resolved = await kiln.prompts.resolve(prompt.id);
  const variables = { city: "Lisbon", days: 3, unit: "C" };
  rows.push(await measure("render (3 variables, checked)", CALLS * 100, async () => resolved.render(variables)));

  console.log(`calls: ${CALLS} uncached, ${CALLS * 100} cached; ${PROMPTS} prompts in the organization\n`);
  console.log("| call | mean µs | p50 µs | p99 µs | caller CPU µs |\n|---|---:|---:|---:|---:|");
  for (const r of rows) {
    console.log(`| ${r.what} | ${us(r.meanUs)} | ${us(r.p50Us)} | ${us(r.p99Us)} | ${us(r.cpuUs)} |`);
  }
  const [byId, byName, cachedId, cachedName] = rows;
  if (byId && byName && cachedId && cachedName) {
    console.log(
      `\ncached ÷ uncached (mean wall time): by id ${(cachedId.meanUs / byId.meanUs).toExponential(2)}` +
        ` (${(byId.meanUs / cachedId.meanUs).toFixed(0)} × faster); by name and label` +
        ` ${(cachedName.meanUs / byName.meanUs).toExponential(2)} (${(byName.meanUs / cachedName.meanUs).toFixed(0)} × faster)`,
    );
  }
  console.log(`first resolve in the process (loads ajv and Mustache): ${firstInProcessMs.toFixed(1)} ms`);
  console.log(
    `a name's first resolve on a new client (list of ${PROMPTS}, then the version): p50 ` +
      `${names[10]?.toFixed(2)} ms, max ${names.at(-1)?.toFixed(2)} ms`,
  );
} finally {
  server.child.kill("SIGTERM");
  await server.exited;
  await rm(dir, { recursive: true, force: true });
}
