/**
 * A run that starts after a publish has answered uses the published version (issue #14), in both
 * modes, with two execution replicas in the distributed one: many times over, a new version is
 * published and runs start at once, several at a time so that both replicas take some; every run
 * records the version just published and answers with its text (local/echo echoes the prompt).
 */
import { readFileSync } from "node:fs";
import { createTestClient } from "@kiln/testing/test-client";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startDistributed } from "./support/distributed.js";
import { startEmbedded } from "./support/embedded.js";
import { runIdentityFlow } from "./support/identity-flow.js";

const ROUNDS = 25;

/** User + system CPU of a process, in clock ticks (/proc/<pid>/stat). */
function cpuTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return Number(fields[11]) + Number(fields[12]);
}
const AT_ONCE = 4;

const modes = [
  {
    name: "embedded mode",
    async start() {
      const { kiln, baseUrl } = await startEmbedded();
      return { base: baseUrl, executionPids: [] as number[], stop: () => kiln.close() };
    },
  },
  {
    name: "distributed mode with two execution replicas",
    async start() {
      const kiln = await startDistributed({
        mongoUrl: inject("mongoUrl"),
        natsUrl: inject("natsUrl"),
        replicasOf: { execution: [{}] },
      });
      const executionPids = kiln.instances.execution.map((r) => r.process.pid ?? 0);
      return { base: kiln.gatewayUrl, executionPids, stop: () => kiln.stop() };
    },
  },
];

describe.each(modes)("publish, then run at once, in $name", (mode) => {
  let running: Awaited<ReturnType<(typeof modes)[number]["start"]>>;

  beforeAll(async () => {
    running = await mode.start();
  }, 120_000);

  afterAll(async () => {
    await running?.stop();
  });

  it(`runs the version just published, ${ROUNDS} times over`, async () => {
    const api = createTestClient(running.base);
    const flow = await runIdentityFlow(running.base, ["prompts:read", "prompts:write", "runs:write"]);
    const { token, organizationId } = flow;
    const variablesSchema = { type: "object", properties: { name: { type: "string" } } };
    const { prompt } = await api.createPublishedPrompt(token, organizationId, {
      systemPrompt: "Version 0 for {{name}}",
      variablesSchema,
    });
    const cpuBefore = running.executionPids.map(cpuTicks);
    for (let round = 1; round <= ROUNDS; round++) {
      const version = await api.createPromptVersion(token, prompt.id, {
        systemPrompt: `Version ${round} for {{name}}`,
        variablesSchema,
      });
      await api.publishPrompt(token, prompt.id, version.id);
      const runs = await Promise.all(
        Array.from({ length: AT_ONCE }, () =>
          api.post<{ promptVersionId: string; output: { text: string } }>(
            `/api/prompts/${prompt.id}/run`,
            { organizationId, variables: { name: "Ada" } },
            { token: flow.apiKey },
          ),
        ),
      );
      for (const run of runs) {
        expect(run.status, run.text).toBe(201);
        expect(run.body.promptVersionId, `round ${round}`).toBe(version.id);
        expect(run.body.output.text).toContain(`Version ${round} for Ada`);
      }
    }
    // Both execution replicas did work (each spent CPU on runs): the runs went to both.
    const spent = running.executionPids.map((pid, i) => cpuTicks(pid) - (cpuBefore[i] ?? 0));
    for (const ticks of spent) expect(ticks).toBeGreaterThan(10);
  }, 120_000);
});
