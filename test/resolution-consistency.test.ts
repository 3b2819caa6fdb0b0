/**
 * A publish or a `production` label move answered to its caller is seen by every later run, through
 * every replica (docs/architecture.md "Consistent resolution"): two catalog and two execution
 * replicas (FerretDB, NATS), round after round a new version is published or `production` moved
 * back to an older one, then runs start at once, by the live version and by `production`, several
 * at a time so that every replica takes some. A catalog replica that answered from what it cached
 * before the change, or an execution replica that kept such an answer, fails a round.
 */
import { createTestClient } from "@kiln/testing/test-client";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type Distributed, startDistributed } from "./support/distributed.js";
import { runIdentityFlow } from "./support/identity-flow.js";

const ROUNDS = 30;
const AT_ONCE = 6;

describe("resolution across two catalog and two execution replicas", () => {
  let kiln: Distributed;

  beforeAll(async () => {
    kiln = await startDistributed({
      mongoUrl: inject("mongoUrl"),
      natsUrl: inject("natsUrl"),
      replicasOf: { catalog: [{}], execution: [{}] },
      // Seven processes started through tsx on a shared two-core machine.
      readyTimeoutMs: 240_000,
    });
  }, 300_000);

  afterAll(async () => {
    await kiln?.stop();
  });

  it(`never runs the version before a publish or a label move, ${ROUNDS} rounds`, async () => {
    const api = createTestClient(kiln.gatewayUrl);
    const flow = await runIdentityFlow(kiln.gatewayUrl, ["prompts:read", "prompts:write", "runs:write"]);
    const { token, organizationId, apiKey } = flow;
    const variablesSchema = { type: "object", properties: { name: { type: "string" } } };
    const { prompt, version: first } = await api.createPublishedPrompt(token, organizationId, {
      systemPrompt: "Version 0 for {{name}}",
      variablesSchema,
    });
    const published: { id: string; text: string }[] = [{ id: first.id, text: "Version 0 for Ada" }];
    const runAll = (body: Record<string, unknown>) =>
      Promise.all(
        Array.from({ length: AT_ONCE }, () =>
          api.post<{ promptVersionId: string; output: { text: string } }>(
            `/api/prompts/${prompt.id}/run`,
            { organizationId, variables: { name: "Ada" }, ...body },
            { token: apiKey },
          ),
        ),
      );
    // Every replica resolves (and caches) the live version before the first change.
    await runAll({});
    for (let round = 1; round <= ROUNDS; round++) {
      let live: { id: string; text: string };
      if (round % 3 === 0) {
        // `production` moved back to an older published version makes that one live again.
        live = published[round % published.length] as { id: string; text: string };
        const moved = await api.put(`/api/prompts/${prompt.id}/labels/production`, { versionId: live.id }, { token });
        expect(moved.status, moved.text).toBe(200);
      } else {
        const version = await api.createPromptVersion(token, prompt.id, {
          systemPrompt: `Version ${round} for {{name}}`,
          variablesSchema,
        });
        await api.publishPrompt(token, prompt.id, version.id);
        live = { id: version.id, text: `Version ${round} for Ada` };
        published.push(live);
      }
      const runs = [...(await runAll({})), ...(await runAll({ label: "production" }))];
      for (const run of runs) {
        expect(run.status, run.text).toBe(201);
        expect(run.body.promptVersionId, `round ${round}`).toBe(live.id);
        expect(run.body.output.text).toContain(live.text);
      }
    }
  }, 300_000);
});
