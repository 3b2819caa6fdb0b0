/**
 * `pnpm bench:store`: the embedded platform (`pnpm start`'s own process, on a fresh data directory)
 * (compiled, as `pnpm start` runs it) stores BENCH_STORE_RUNS (default 100,000) prompt runs through POST /api/prompts/:id/run, and this
 * script reports the process's resident memory every 10 % of the way, the data file's size, the
 * time to restart on the full directory, and the latency of reading a page of runs and a run by
 * idempotent replay at the end — runs live on disk, so memory must stay flat as they pile up.
 */
import { execFileSync } from "node:child_process";
import { readFileSync, statSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import autocannon from "autocannon";
import { call, runIdentityFlow } from "../support/identity-flow.js";
import { type KilnProcess, startKilnProcess } from "../support/kiln-process.js";
import { publishedPrompt, ROOT } from "./load.js";

const RUNS = Number(process.env.BENCH_STORE_RUNS ?? 100_000);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);

/** Resident MB from /proc: all of it, the process's own (anonymous) memory, and mapped file pages. */
const rss = (pid: number) => {
  const status = readFileSync(`/proc/${pid}/status`, "utf8").split("\n");
  const mb = (field: string) =>
    Math.round(Number(status.find((l) => l.startsWith(`${field}:`))?.replace(/\D+/g, "") ?? 0) / 1024);
  return { total: mb("VmRSS"), anon: mb("RssAnon"), file: mb("RssFile") };
};
const rssCells = (pid: number) => {
  const r = rss(pid);
  return [r.total, r.anon, r.file].map((n) => String(n).padStart(7)).join("  ");
};

async function stop(kiln: KilnProcess) {
  kiln.child.kill("SIGTERM");
  await kiln.exited;
}

// As `pnpm start` runs it: the compiled launcher.
execFileSync(process.execPath, ["scripts/build.mjs"], { cwd: ROOT, stdio: "inherit" });
const dir = await mkdtemp(join(tmpdir(), "kiln-bench-store-"));
const dataDir = join(dir, "data");
try {
  let kiln = await startKilnProcess(dataDir, {}, { compiled: true });
  const pid = kiln.child.pid ?? 0;
  const flow = await runIdentityFlow(kiln.base, ["prompts:read", "prompts:write", "runs:write"]);
  const promptId = await publishedPrompt(kiln.base, flow, "local/echo");
  const url = `${kiln.base}/api/prompts/${promptId}/run`;
  const body = JSON.stringify({ organizationId: flow.organizationId, variables: { city: "Paris" } });
  console.log(`storing ${RUNS} runs with ${CONNECTIONS} connections; RSS of the kiln process (pid ${pid}):`);
  console.log(
    `  ${"runs stored".padStart(12)}  ${"RSS MB".padStart(7)}  ${"anon".padStart(7)}  ${"file".padStart(7)}  ${"runs/s".padStart(7)}  errors`,
  );
  console.log(`  ${"0".padStart(12)}  ${rssCells(pid)}`);
  const step = Math.max(1, Math.round(RUNS / 10));
  let stored = 0;
  let errors = 0;
  while (stored < RUNS) {
    const amount = Math.min(step, RUNS - stored);
    const r = await autocannon({
      url,
      connections: CONNECTIONS,
      amount,
      method: "POST",
      headers: { authorization: `Bearer ${flow.apiKey}`, "content-type": "application/json" },
      body,
    });
    stored += r["2xx"];
    errors += r.errors + r.non2xx;
    const rps = Math.round(r.requests.average);
    console.log(
      `  ${String(stored).padStart(12)}  ${rssCells(pid)}  ${String(rps).padStart(7)}  ${r.errors + r.non2xx}`,
    );
    if (r["2xx"] === 0) throw new Error("no run was stored in this step");
  }
  const file = statSync(join(dataDir, "store.db")).size;
  console.log(`data file: ${Math.round(file / 1024 / 1024)} MB (${Math.round(file / stored)} bytes per run)`);

  // The same idempotency key replays one stored run: a point read among all the runs.
  const replay = async (key: string) => {
    const started = performance.now();
    const res = await call(kiln.base, "POST", `/api/prompts/${promptId}/run`, {
      apiKey: flow.apiKey,
      headers: { "idempotency-key": key },
      body: { organizationId: flow.organizationId, variables: { city: "Paris" } },
    });
    if (res.status !== 201) throw new Error(`run: ${res.status}`);
    return performance.now() - started;
  };
  await replay("bench-store");
  const replayMs = await replay("bench-store");

  await stop(kiln);
  const restartStarted = performance.now();
  kiln = await startKilnProcess(dataDir, {}, { compiled: true });
  const restartMs = performance.now() - restartStarted;
  const pageStarted = performance.now();
  const prompts = await call(kiln.base, "GET", `/api/prompts?organizationId=${flow.organizationId}&limit=50`, {
    apiKey: flow.apiKey,
  });
  const pageMs = performance.now() - pageStarted;
  if (prompts.status !== 200) throw new Error(`list prompts: ${prompts.status}`);
  console.log(
    `after ${stored} runs: restart to listening ${Math.round(restartMs)} ms, RSS after restart (total, anon, file MB) ${rssCells(
      kiln.child.pid ?? 0,
    )
      .trim()
      .split(/\s+/)
      .join("/")}; ` +
      `idempotent replay ${replayMs.toFixed(1)} ms; a page of prompts ${pageMs.toFixed(1)} ms; errors ${errors}`,
  );
  await stop(kiln);
} finally {
  await rm(dir, { recursive: true, force: true });
}
