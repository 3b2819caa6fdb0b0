/**
 * `pnpm tsx test/bench/replicas.ts`: the figures of docs/deploy.md. Starts the distributed platform
 * as processes twice, with one and with two execution replicas, and drives POST
 * /api/prompts/:id/run through the gateway with autocannon (local/echo, and a model stub answering
 * in 50 ms). Then measures each process's resident memory, and the drain time of an execution
 * replica stopped with SIGTERM under load (every request still answered).
 * BENCH_SECONDS (default 10) and BENCH_CONNECTIONS (default 10) tune the runs (test/bench/load.ts).
 */
import { readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { createTestClient } from "@kiln/testing/test-client";
import { startDistributed } from "../support/distributed.js";
import { call, runIdentityFlow } from "../support/identity-flow.js";
import { startFerretDb, startNatsServer } from "../support/servers.js";
import { load, startStubProcess, stubProviders } from "./load.js";

const rssMiB = (pid: number | undefined) => {
  const line = readFileSync(`/proc/${pid}/status`, "utf8").match(/^VmRSS:\s+(\d+) kB/m);
  return Math.round(Number(line?.[1] ?? 0) / 1024);
};

async function main() {
  const [mongo, nats, stub] = await Promise.all([startFerretDb(), startNatsServer(), startStubProcess(50)]);
  const providers = stubProviders(stub.baseUrl);
  const rows: string[] = [];
  try {
    for (const replicas of [1, 2]) {
      const kiln = await startDistributed({
        mongoUrl: mongo.url,
        natsUrl: nats.url,
        env: { FREE_PLAN_MONTHLY_RUN_LIMIT: "0" },
        envOf: { execution: { OPENAI_COMPATIBLE_PROVIDERS: providers } },
        replicasOf: {
          execution: Array.from({ length: replicas - 1 }, () => ({ OPENAI_COMPATIBLE_PROVIDERS: providers })),
        },
      });
      try {
        const flow = await runIdentityFlow(kiln.gatewayUrl);
        const runUrl: Record<string, string> = {};
        for (const model of ["local/echo", "stub/fixed"]) {
          const { prompt } = await createTestClient(kiln.gatewayUrl).createPublishedPrompt(
            flow.token,
            flow.organizationId,
            {
              systemPrompt: "Hello {{name}}",
              variablesSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
              model,
            },
          );
          const promptId = prompt.id;
          runUrl[model] = `${kiln.gatewayUrl}/api/prompts/${promptId}/run`;
          const once = await call(kiln.gatewayUrl, "POST", `/api/prompts/${promptId}/run`, {
            token: flow.token,
            body: { organizationId: flow.organizationId, variables: { name: "Ada" } },
          });
          if (once.status !== 201)
            throw new Error(`a run of ${model} answered ${once.status}: ${JSON.stringify(once.body)}`);
          const r = await load(runUrl[model], {
            method: "POST",
            headers: { authorization: `Bearer ${flow.token}`, "content-type": "application/json" },
            body: JSON.stringify({ organizationId: flow.organizationId, variables: { name: "Ada" } }),
          });
          rows.push(`| ${replicas} | ${model} | ${r.rps} | ${r.p50} | ${r.p99} | ${r.errors} |`);
        }
        if (replicas === 2) {
          const memory = [
            ["gateway", kiln.processes.gateway.pid],
            ...(["identity", "catalog", "execution", "evaluation"] as const).map(
              (n) => [n, kiln.processes[n].pid] as const,
            ),
          ].map(([name, pid]) => `${name} ${rssMiB(pid as number)} MiB`);
          rows.push(`\nresident memory after the runs: ${memory.join(", ")}`);
          // Drain under load: SIGTERM to the second replica while runs (model stub) go on.
          const loadRun = load(
            runUrl["stub/fixed"] ?? "",
            {
              method: "POST",
              headers: { authorization: `Bearer ${flow.token}`, "content-type": "application/json" },
              body: JSON.stringify({ organizationId: flow.organizationId, variables: { name: "Ada" } }),
            },
            4,
          );
          await sleep(1_000);
          const victim = kiln.instances.execution[1]?.process;
          const exited = new Promise<number | null>((resolve) => victim?.once("exit", (code) => resolve(code)));
          const t0 = Date.now();
          victim?.kill("SIGTERM");
          const code = await exited;
          rows.push(`execution replica SIGTERM under load: exit ${code} after ${Date.now() - t0} ms`);
          const r = await loadRun;
          rows.push(`requests during it: ${r.total}, errors ${r.errors}`);
        }
      } finally {
        await kiln.stop();
      }
    }
  } finally {
    stub.child.kill("SIGTERM");
    await Promise.all([mongo.stop({ removeData: true }), nats.stop({ removeData: true })]);
  }
  console.log(`| execution replicas | model | req/s | p50 ms | p99 ms | errors |\n|---:|---|---:|---:|---:|---:|`);
  console.log(rows.join("\n"));
}

await main();
