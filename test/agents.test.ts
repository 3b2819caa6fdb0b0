/**
 * Agents end to end over real HTTP in both run modes (api.md "Agents"): author a workflow of three
 * steps and a branch (validation reports errors, then passes), publish, run, rerun from step 2
 * with a changed input reusing step 1, compare the two runs, diff two versions, roll back, and load
 * the first run's inputs against the new version. The model is the built-in local/echo.
 */

import { AGENT_INPUT_SCHEMA, type AgentFixture, createAgentFixture } from "@kiln/testing/agent-fixture";
import { createTestClient, type TestClient } from "@kiln/testing/test-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FlowResult, runIdentityFlow } from "./support/identity-flow.js";
import { RUN_MODES, type RunningKiln } from "./support/run-modes.js";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are asserted field by field.
type Loose = any;

const ISO = expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);

describe.each(RUN_MODES)("agents in $name", (mode) => {
  let running: RunningKiln;
  let api: TestClient;
  let flow: FlowResult;
  let agent: AgentFixture;
  let firstVersionId: string;
  let secondVersionId: string;
  let first: Loose;
  let rerun: Loose;
  const inputs = { topic: "tea", city: "Paris" };

  beforeAll(async () => {
    running = await mode.start();
    api = createTestClient(running.base);
    flow = await runIdentityFlow(running.base);
    agent = await createAgentFixture(api, flow.token, flow.organizationId);
    firstVersionId = agent.draftVersionId;
  }, 120_000);

  afterAll(async () => {
    await running?.stop();
  });

  const token = () => ({ token: flow.token });

  it("validates the workflow: errors first, then valid; publishes", async () => {
    const url = `/api/agent-versions/${firstVersionId}/workflow/validate`;
    const broken = { ...agent.workflow, entry: "nowhere" };
    const invalid = await api.post<Loose>(url, { workflow: broken }, token());
    expect(invalid.status, invalid.text).toBe(200);
    expect(invalid.body.valid).toBe(false);
    expect(invalid.body.errors.length).toBeGreaterThan(0);
    for (const e of invalid.body.errors)
      expect(e).toEqual({ path: expect.any(String), code: expect.any(String), message: expect.any(String) });

    const valid = await api.post<Loose>(url, {}, token());
    expect(valid.status).toBe(200);
    expect(valid.body).toMatchObject({ valid: true, errors: [] });

    const published = await api.post<Loose>(`/api/agents/${agent.agentId}/publish`, {}, token());
    expect(published.status, published.text).toBe(200);
    expect(published.body.publishedVersionId).toBe(firstVersionId);
  });

  it("runs the published version through the branch", async () => {
    const res = await api.post<Loose>(
      `/api/agents/${agent.agentId}/run`,
      { organizationId: flow.organizationId, inputs },
      token(),
    );
    expect(res.status, res.text).toBe(201);
    first = res.body;
    expect(first).toMatchObject({
      id: expect.stringMatching(/^arun_[0-9a-f]{32}$/),
      kind: "agent",
      status: "succeeded",
      agentId: agent.agentId,
      agentVersionId: firstVersionId,
      input: { inputs },
      toolCallCount: 1,
      toolCallCounts: { [agent.toolKey]: 1 },
      createdAt: ISO,
      completedAt: ISO,
    });
    expect(first.steps.map((s: Loose) => [s.stepId, s.status, s.reused])).toEqual([
      ["draft", "succeeded", false],
      ["weather", "succeeded", false],
      ["polish", "succeeded", false],
    ]);
    expect(first.output.text).toContain("Draft a note about tea.");
    expect(first.usage.inputTokens).toBe(first.steps.reduce((n: number, s: Loose) => n + s.usage.inputTokens, 0));
    // The prompt steps' child runs are ordinary stored runs.
    expect(first.steps[0].runId).toMatch(/^run_/);

    const skipped = await api.post<Loose>(
      `/api/agents/${agent.agentId}/run`,
      { organizationId: flow.organizationId, inputs: { ...inputs, skipWeather: true } },
      token(),
    );
    expect(skipped.body.steps.map((s: Loose) => s.stepId)).toEqual(["draft", "polish"]);
  });

  it("runs asynchronously: 202 running, then polled to completion", async () => {
    const res = await api.post<Loose>(
      `/api/agents/${agent.agentId}/run`,
      { organizationId: flow.organizationId, inputs, mode: "async" },
      token(),
    );
    expect(res.status, res.text).toBe(202);
    expect(res.body).toMatchObject({ status: "running", completedAt: null, steps: [] });
    let polled: Loose = res.body;
    for (let i = 0; i < 200 && polled.status === "running"; i++) {
      await new Promise((r) => setTimeout(r, 25));
      polled = (await api.get<Loose>(`/api/agent-runs/${res.body.id}`, token())).body;
    }
    expect(polled).toMatchObject({ id: res.body.id, status: "succeeded", completedAt: ISO });
    expect(polled.output).toEqual(first.output);
  });

  it("reruns from step 2 with a changed input, reusing step 1", async () => {
    const res = await api.post<Loose>(
      `/api/agent-runs/${first.id}/rerun-from-step`,
      { stepId: "weather", inputs: { topic: "coffee", city: "Rome" } },
      token(),
    );
    expect(res.status, res.text).toBe(201);
    rerun = res.body;
    expect(rerun).toMatchObject({
      parentRunId: first.id,
      rerunFromStepId: "weather",
      agentVersionId: firstVersionId,
      status: "succeeded",
      input: { inputs: { topic: "coffee", city: "Rome" } },
    });
    expect(rerun.steps.map((s: Loose) => [s.stepId, s.reused])).toEqual([
      ["draft", true],
      ["weather", false],
      ["polish", false],
    ]);
    // Step 1 kept its recorded output (about tea, not coffee) and cost nothing.
    expect(rerun.steps[0]).toMatchObject({
      output: first.steps[0].output,
      usage: { inputTokens: 0, outputTokens: 0 },
      estimatedCostUsd: 0,
    });
    expect(rerun.steps[0].runId).toBeUndefined();
    expect(rerun.steps[1].input).toEqual({ city: "Rome" });
    const read = await api.get<Loose>(`/api/agent-runs/${rerun.id}`, token());
    expect(read.body).toEqual(rerun);
  });

  it("compares the two runs", async () => {
    const res = await api.get<Loose>("/api/agent-runs/compare", {
      ...token(),
      query: { runIds: `${first.id},${rerun.id}` },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.runs.map((r: Loose) => r.id)).toEqual([first.id, rerun.id]);
    expect(res.body.steps.map((s: Loose) => [s.stepId, s.outputsEqual])).toEqual([
      ["draft", true],
      ["weather", true],
      ["polish", true],
    ]);
    expect(Object.keys(res.body.totals).sort()).toEqual([first.id, rerun.id].sort());
    expect(res.body.totals[rerun.id].usage.inputTokens).toBeLessThan(res.body.totals[first.id].usage.inputTokens);
  });

  it("diffs a new version, rolls back, and loads the first run's inputs against the new version", async () => {
    const created = await api.post<Loose>(`/api/agents/${agent.agentId}/versions`, {}, token());
    expect(created.status, created.text).toBe(201);
    secondVersionId = created.body.id;
    const stricter = {
      ...agent.workflow,
      inputSchema: {
        ...AGENT_INPUT_SCHEMA,
        properties: { ...AGENT_INPUT_SCHEMA.properties, language: { type: "string" } },
        required: [...AGENT_INPUT_SCHEMA.required, "language"],
      },
    };
    const saved = await api.request("PUT", `/api/agent-versions/${secondVersionId}/workflow`, {
      ...token(),
      body: { workflow: stricter },
    });
    expect(saved.status, saved.text).toBe(200);
    const published = await api.post<Loose>(`/api/agents/${agent.agentId}/publish`, {}, token());
    expect(published.body.publishedVersionId).toBe(secondVersionId);

    const diff = await api.get<Loose>(`/api/agents/${agent.agentId}/versions/${secondVersionId}/diff`, {
      ...token(),
      query: { against: firstVersionId },
    });
    expect(diff.status, diff.text).toBe(200);
    expect(diff.body.from.versionId).toBe(firstVersionId);
    expect(diff.body.to.versionId).toBe(secondVersionId);
    expect(diff.body.changes.map((c: Loose) => c.path)).toContain("/workflow/inputSchema/properties/language");

    const loaded = await api.post<Loose>(
      `/api/agent-runs/${first.id}/load-inputs`,
      { versionId: secondVersionId },
      token(),
    );
    expect(loaded.status, loaded.text).toBe(200);
    expect(loaded.body).toEqual({
      agentId: agent.agentId,
      agentVersionId: secondVersionId,
      inputs,
      validation: {
        valid: false,
        errors: [{ path: "inputs.language", code: "required", message: expect.any(String) }],
      },
    });

    const rolledBack = await api.post<Loose>(
      `/api/agents/${agent.agentId}/versions/${firstVersionId}/rollback`,
      {},
      token(),
    );
    expect(rolledBack.status, rolledBack.text).toBe(200);
    const restored = rolledBack.body.publishedVersionId;
    expect(restored).not.toBe(firstVersionId);
    expect(restored).not.toBe(secondVersionId);

    const againstPublished = await api.post<Loose>(`/api/agent-runs/${first.id}/load-inputs`, {}, token());
    expect(againstPublished.body).toMatchObject({ agentVersionId: restored, validation: { valid: true, errors: [] } });
    const rerunOnRollback = await api.post<Loose>(
      `/api/agents/${agent.agentId}/run`,
      { organizationId: flow.organizationId, inputs: againstPublished.body.inputs },
      token(),
    );
    expect(rerunOnRollback.body).toMatchObject({ status: "succeeded", agentVersionId: restored, output: first.output });
  });
});
