/**
 * `pnpm bench:eval`: an evaluation at the scale of issue #19 on the distributed platform (the built
 * launcher, FerretDB, nats-server). BENCH_EVAL_CASES (default 10,000) cases × 2 targets, one attempt
 * each, taken by BENCH_EVAL_WORKERS (default 4) worker processes (the evaluation service's own and
 * `kiln evaluation-worker` replicas) at EVALUATION_WORKER_CONCURRENCY each (BENCH_EVAL_CONCURRENCY,
 * default 8), against an OpenAI-protocol stub that answers 429 with a Retry-After to one call in
 * twenty (5%) and that the execution service does not retry itself. One worker process is killed
 * with SIGKILL when a third of the results are in. Prints the throughput and checks that every
 * case × target has exactly one result, none of them an error.
 */
import { execFileSync } from "node:child_process";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { type ReceivedRequest, startOpenAIStub, stubReply } from "@kiln/testing/openai-stub";
import { createTestClient, type EvaluationRun } from "@kiln/testing/test-client";
import { startDistributed } from "../support/distributed.js";
import { twoVersionSkill } from "../support/evaluation-fixture.js";
import { runIdentityFlow } from "../support/identity-flow.js";
import { startFerretDb, startNatsServer } from "../support/servers.js";
import { ROOT } from "./load.js";

const CASES = Number(process.env.BENCH_EVAL_CASES ?? 10_000);
const WORKERS = Number(process.env.BENCH_EVAL_WORKERS ?? 4);
const CONCURRENCY = Number(process.env.BENCH_EVAL_CONCURRENCY ?? 8);
const RATE_LIMIT_EVERY = 20;

let calls = 0;
let limited = 0;
function respond(request: ReceivedRequest) {
  if (++calls % RATE_LIMIT_EVERY === 0) {
    limited++;
    return stubReply.rateLimited({ retryAfterMs: 200 });
  }
  const messages: { role?: string; content?: unknown }[] = request.body?.messages ?? [];
  const system = messages.find((m) => m.role === "system");
  return stubReply.text(typeof system?.content === "string" ? system.content : "");
}

execFileSync(process.execPath, ["scripts/build.mjs"], { cwd: ROOT, stdio: "inherit" });
const stub = await startOpenAIStub({ latencyMs: 20, respond });
const [ferret, nats] = await Promise.all([startFerretDb(), startNatsServer()]);
const workerEnv = { EVALUATION_WORKER_CONCURRENCY: String(CONCURRENCY), EVALUATION_ACK_WAIT_MS: "5000" };
const kiln = await startDistributed({
  mongoUrl: ferret.url,
  natsUrl: nats.url,
  logLevel: "error",
  compiled: true,
  env: { RATE_LIMIT_PER_MINUTE: "0", FREE_PLAN_MONTHLY_RUN_LIMIT: "0" },
  envOf: {
    execution: {
      PROVIDER_MAX_RETRIES: "0",
      OPENAI_COMPATIBLE_PROVIDERS: JSON.stringify([
        {
          id: "stub",
          baseUrl: stub.baseUrl,
          models: [{ model: "fast", inputPerMTokUsd: 0.15, outputPerMTokUsd: 0.6 }],
        },
      ]),
    },
    evaluation: workerEnv,
  },
});
try {
  const replicas = [];
  for (let i = 1; i < WORKERS; i++) {
    replicas.push(
      await kiln.startReplica("evaluation", {
        command: "evaluation-worker",
        env: workerEnv,
        readyLog: "evaluation workers started",
      }),
    );
  }
  const api = createTestClient(kiln.gatewayUrl);
  const flow = await runIdentityFlow(kiln.gatewayUrl, ["skills:read", "evaluations:read", "evaluations:write"]);
  const skill = await twoVersionSkill(api, flow, {
    name: "Greeter at scale",
    model: "stub/fast",
    published: "Hello {{name}}",
    draft: "Hi {{name}}",
  });
  for (let from = 0; from < CASES; from += 500) {
    await api.createEvaluationCases(
      flow.apiKey,
      undefined,
      skill.skillId,
      Array.from({ length: Math.min(500, CASES - from) }, (_, i) => ({
        name: `case ${from + i}`,
        input: { name: `Person${from + i}` },
        assertions: [{ type: "contains" as const, value: `Hello Person${from + i}` }],
      })),
    );
  }
  process.stderr.write(`${CASES} cases created; evaluating against draft and published\n`);

  const started = performance.now();
  const run = await api.startEvaluation(flow.apiKey, undefined, skill.skillId);
  // Progress is read off the model's answers, not by reading the run: the detail of a running run
  // carries every result so far, which at this size would weigh on the store more than the work.
  const answered = () => calls - limited;
  let killed = false;
  while (answered() < CASES * 2) {
    await sleep(1_000);
    if (!killed && answered() >= (CASES * 2) / 3) {
      replicas[0]?.process.kill("SIGKILL");
      killed = true;
      const seconds = (performance.now() - started) / 1000;
      process.stderr.write(`killed one worker process at ${answered()} answered calls (${seconds.toFixed(0)} s)\n`);
    }
  }
  let done: EvaluationRun;
  for (;;) {
    done = await api.getEvaluation(flow.apiKey, skill.skillId, run.id);
    if (done.status === "completed" || done.status === "failed") break;
    await sleep(2_000);
  }
  const seconds = (performance.now() - started) / 1000;
  const items = done.results.flatMap((r) =>
    Object.entries(r.byTarget).map(([label, t]) => ({ key: `${r.caseId}:${label}`, outcome: t?.outcome })),
  );
  const unique = new Set(items.map((i) => i.key)).size;
  const errors = items.filter((i) => i.outcome === "error").length;
  const ok = done.status === "completed" && items.length === CASES * 2 && unique === CASES * 2 && errors === 0;
  console.log(
    [
      `evaluation of ${CASES} cases × 2 targets, ${WORKERS} worker processes × ${CONCURRENCY}, one killed midway:`,
      `${done.status} in ${seconds.toFixed(1)} s, ${((CASES * 2) / seconds).toFixed(0)} case runs/s`,
      `results ${items.length} (unique ${unique}, errors ${errors}); model calls ${calls}, answered 429: ${limited}`,
      ok ? "every case × target exactly once" : "MISMATCH",
    ].join("\n"),
  );
  if (!ok) process.exitCode = 1;
} finally {
  await kiln.stop();
  await Promise.all([ferret.stop({ removeData: true }), nats.stop({ removeData: true })]);
  await stub.close();
}
