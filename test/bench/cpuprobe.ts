// CPU per request of the embedded Kiln process for POST /api/prompts/:id/run (local/echo), under autocannon.
import { execFileSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runIdentityFlow } from "../support/identity-flow.js";
import { startKilnProcess } from "../support/kiln-process.js";
import { load, publishedPrompt, ROOT } from "./load.js";

const cpuMs = (pid: number) => {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(f[11]) + Number(f[12])) * 10;
};
execFileSync(process.execPath, ["scripts/build.mjs"], { cwd: ROOT, stdio: "inherit" });
const dir = await mkdtemp(join(tmpdir(), "kiln-probe-"));
const extra: Record<string, string> = process.env.PROBE_PROF ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${process.env.PROBE_PROF}` } : {};
const kiln = await startKilnProcess(join(dir, "data"), extra, { compiled: true });
const flow = await runIdentityFlow(kiln.base);
const promptId = await publishedPrompt(kiln.base, flow, "local/echo");
const url = `${kiln.base}/api/prompts/${promptId}/run`;
const init = {
  method: "POST" as const,
  headers: { authorization: `Bearer ${flow.apiKey}`, "content-type": "application/json" },
  body: JSON.stringify({ organizationId: flow.organizationId, variables: { city: "Paris" } }),
};
await load(url, init, 3, 10); // warm
for (let i = 0; i < 3; i++) {
  const c0 = cpuMs(kiln.child.pid as number);
  const r = await load(url, init, 5, 10);
  const c1 = cpuMs(kiln.child.pid as number);
  console.log(`round ${i}: ${r.rps} req/s, ${r.total} requests, CPU ${((c1 - c0) / r.total * 1000).toFixed(0)} µs/request, errors ${r.errors}`);
}
kiln.child.kill("SIGTERM");
await kiln.exited;
await rm(dir, { recursive: true, force: true });
