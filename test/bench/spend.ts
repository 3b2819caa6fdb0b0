/**
 * `pnpm bench:spend`: what the usage ledger and budgets cost the run path (issue #49: < 5 % of
 * throughput). One `pnpm start` process (the compiled launcher) against the OpenAI-protocol stub in
 * a process of its own (BENCH_SPEND_STUB_MS, default 20 ms), a priced model (`stub/fixed`), two
 * organizations in it: one without budgets, one with three blocking budgets that every run is
 * checked against (its organization, its API key, its prompt; limits no run reaches). Rounds
 * alternate (A, B, A, B, …; BENCH_ROUNDS, default 3) at BENCH_CONNECTIONS for BENCH_SECONDS, so the
 * host's load falls on both alike: requests per second and the process's CPU per request (from
 * /proc/<pid>/stat, read after the background work of the round settled), and their ratio
 * with ÷ without. The ledger counts both organizations' runs (it cannot be turned off): its own
 * cost is the share of the process's CPU profile spent under the ledger's and the budgets' code,
 * BENCH_SPEND_PROFILE=1 (the sources through tsx, so that each frame names its file;
 * BENCH_SPEND_PROFILE_DIR=<dir> keeps the .cpuprofile).
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout } from "node:timers/promises";
import { call, type FlowResult, runIdentityFlow } from "../support/identity-flow.js";
import { startKilnProcess } from "../support/kiln-process.js";
import { BENCH, cpuMs, load, publishedPrompt, ROOT, startStubProcess, stubProviders } from "./load.js";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const STUB_MS = Number(process.env.BENCH_SPEND_STUB_MS ?? 20);
const PROFILE = process.env.BENCH_SPEND_PROFILE === "1";
const SETTLE_MS = 1_000;

interface Variant {
  name: string;
  url: string;
  init: { method: "POST"; headers: Record<string, string>; body: string };
  rps: number[];
  cpuUs: number[];
}

async function variantOf(base: string, name: string, withBudgets: boolean): Promise<Variant> {
  const flow: FlowResult = await runIdentityFlow(base);
  const promptId = await publishedPrompt(base, flow, "stub/fixed");
  if (withBudgets) {
    const apiKeyId = flow.apiKeyId;
    for (const scope of [{ type: "organization" }, { type: "api_key", apiKeyId }, { type: "prompt", promptId }]) {
      const created = await call(base, "POST", "/api/budgets", {
        token: flow.token,
        body: {
          organizationId: flow.organizationId,
          name: `bench ${scope.type}`,
          scope,
          limitUsd: 1_000_000,
          period: "month",
          action: "block",
          alertAt: [],
        },
      });
      if (created.status !== 201) throw new Error(`budget refused: ${JSON.stringify(created.body)}`);
    }
  }
  return {
    name,
    url: `${base}/api/prompts/${promptId}/run`,
    init: {
      method: "POST",
      headers: { authorization: `Bearer ${flow.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ organizationId: flow.organizationId, variables: { city: "Paris" } }),
    },
    rps: [],
    cpuUs: [],
  };
}

/**
 * The share of a CPU profile's busy samples with a frame of the ledger's or the budgets' code on
 * the stack, and the functions they are under (the spend frame nearest the leaf).
 */
function spendShare(profileDir: string): { samples: number; share: number; top: [string, number][] } {
  const file = readdirSync(profileDir).find((f) => f.endsWith(".cpuprofile"));
  if (!file) throw new Error("no CPU profile written");
  const profile = JSON.parse(readFileSync(join(profileDir, file), "utf8")) as {
    nodes: { id: number; callFrame: { url: string; functionName: string }; children?: number[] }[];
    samples: number[];
  };
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const isSpend = (url: string) => /execution\/src\/(usage|budgets)\//.test(url);
  const nearest = new Map<number, string | null>();
  const spendFrameOf = (id: number): string | null => {
    const known = nearest.get(id);
    if (known !== undefined) return known;
    const node = byId.get(id);
    const up = parent.get(id);
    const own = node && isSpend(node.callFrame.url);
    const value = own
      ? `${node.callFrame.url.split("/").pop()} ${node.callFrame.functionName || "(anonymous)"}`
      : up === undefined
        ? null
        : spendFrameOf(up);
    nearest.set(id, value);
    return value;
  };
  const idle = new Set(profile.nodes.filter((n) => n.callFrame.functionName === "(idle)").map((n) => n.id));
  const busy = profile.samples.filter((s) => !idle.has(s));
  const counts = new Map<string, number>();
  for (const s of busy) {
    const frame = spendFrameOf(s);
    if (frame) counts.set(frame, (counts.get(frame) ?? 0) + 1);
  }
  const spent = [...counts.values()].reduce((a, b) => a + b, 0);
  const top = [...counts].sort((a, b) => b[1] - a[1]).slice(0, 8);
  return { samples: busy.length, share: spent / Math.max(1, busy.length), top };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

if (!PROFILE) execFileSync(process.execPath, ["scripts/build.mjs"], { cwd: ROOT, stdio: "inherit" });
const stub = await startStubProcess(STUB_MS);
const dir = await mkdtemp(join(tmpdir(), "kiln-bench-spend-"));
// BENCH_SPEND_PROFILE_DIR keeps the profile (open it in Chrome DevTools); else it goes with the data.
const profileDir = process.env.BENCH_SPEND_PROFILE_DIR || join(dir, "profile");
const kiln = await startKilnProcess(
  join(dir, "data"),
  { OPENAI_COMPATIBLE_PROVIDERS: stubProviders(stub.baseUrl) },
  { compiled: !PROFILE, nodeArgs: PROFILE ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : [] },
);
const pid = kiln.child.pid as number;
try {
  const variants = [
    await variantOf(kiln.base, "no budgets", false),
    await variantOf(kiln.base, "three blocking budgets", true),
  ];
  for (const v of variants) await load(v.url, v.init, 3); // warm-up: caches and JIT
  console.log(`stub ${STUB_MS} ms, ${BENCH.connections} connections, ${BENCH.seconds} s per round\n`);
  console.log(
    "| round | organization | req/s | requests | CPU µs per request | errors |\n|---:|---|---:|---:|---:|---:|",
  );
  for (let round = 1; round <= ROUNDS; round++) {
    for (const v of round % 2 === 1 ? variants : [...variants].reverse()) {
      const before = cpuMs(pid);
      const r = await load(v.url, v.init, BENCH.seconds, BENCH.connections);
      await setTimeout(SETTLE_MS);
      const perRequest = ((cpuMs(pid) - before) / r.total) * 1000;
      v.rps.push(r.rps);
      v.cpuUs.push(perRequest);
      console.log(`| ${round} | ${v.name} | ${r.rps} | ${r.total} | ${perRequest.toFixed(0)} | ${r.errors} |`);
    }
  }
  const [without, withBudgets] = variants as [Variant, Variant];
  console.log(
    `\nwith ÷ without budgets, medians: throughput ${(median(withBudgets.rps) / median(without.rps)).toFixed(3)}, ` +
      `CPU per request ${(median(withBudgets.cpuUs) / median(without.cpuUs)).toFixed(3)}`,
  );
} finally {
  kiln.child.kill("SIGTERM");
  await kiln.exited;
  stub.child.kill("SIGTERM");
}
if (PROFILE) {
  const { samples, share, top } = spendShare(profileDir);
  console.log(`ledger and budgets: ${(share * 100).toFixed(2)} % of ${samples} busy samples of the process`);
  for (const [frame, n] of top) console.log(`  ${((n / samples) * 100).toFixed(2)} %  ${frame}`);
}
await rm(dir, { recursive: true, force: true });
