/**
 * The attach flow of docs/concepts.md "The attach flow", steps 4 and 5, over real HTTP in both run modes: preview a skill
 * (nothing stored), run it and read the run back, run a prompt; every run field is asserted. The
 * model is the built-in local/echo, which calls attached tools and answers JSON schemas offline.
 */

import { createTestClient, type TestClient } from "@kiln/testing/test-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FlowResult, runIdentityFlow } from "./support/identity-flow.js";
import { RUN_MODES, type RunningKiln } from "./support/run-modes.js";

// biome-ignore lint/suspicious/noExplicitAny: run bodies are asserted field by field.
type Loose = any;

const ISO = expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);

describe.each(RUN_MODES)("runs in $name", (mode) => {
  let running: RunningKiln;
  let client: TestClient;
  let flow: FlowResult;
  let toolId: string;
  let toolKey: string;
  let forecast: { promptId: string; versionId: string };
  let skillId: string;
  let skillVersionId: string;

  beforeAll(async () => {
    running = await mode.start();
    client = createTestClient(running.base);
    flow = await runIdentityFlow(running.base);
    const { token, organizationId } = flow;
    const tool = await client.createTool(token, organizationId, {
      name: "Weather",
      config: { result: { temperatureC: 21, sky: "clear" } },
      inputSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
    });
    toolId = tool.id;
    toolKey = tool.toolKey;
    const first = await client.createPublishedPrompt(token, organizationId, {
      systemPrompt: "Write the forecast for {{city}}.",
      variablesSchema: { type: "object", properties: { city: { type: "string", minLength: 1 } }, required: ["city"] },
      responseFormat: {
        type: "json_schema",
        name: "forecast",
        schema: { type: "object", properties: { summary: { type: "string" } }, required: ["summary"] },
      },
      tools: [toolId],
    });
    forecast = { promptId: first.prompt.id, versionId: first.version.id };
    const second = await client.createPublishedPrompt(token, organizationId, {
      systemPrompt: "Advise on clothing given: {{summary}}",
      variablesSchema: { type: "object", properties: { summary: { type: "string" } }, required: ["summary"] },
    });
    const skill = await client.createSkill(token, organizationId, { name: "Trip advice" });
    skillId = skill.id;
    const composed = await client.replaceSkillPrompts(token, skill.draftVersionId ?? "", [
      { promptId: first.prompt.id, alias: "forecast" },
      { promptId: second.prompt.id, alias: "advice", variables: { summary: "{{steps.forecast.output.summary}}" } },
    ]);
    skillVersionId = composed.describedVersionId;
    await client.publishSkill(token, skillId);
  }, 120_000);

  afterAll(async () => {
    await running?.stop();
  });

  function expectSkillRun(run: Loose, preview: boolean) {
    expect(run).toMatchObject({
      kind: "skill",
      organizationId: flow.organizationId,
      status: "succeeded",
      input: { input: { city: "Paris" } },
      provider: "local",
      model: "local/echo",
      estimatedCostUsd: 0,
      toolCallCount: 1,
      toolCallCounts: { [toolKey]: 1 },
      skillId,
      skillVersionId,
      createdAt: ISO,
      completedAt: ISO,
    });
    expect(run.id).toEqual(preview ? null : expect.stringMatching(/^srun_[0-9a-f]{32}$/));
    expect(run.preview ?? false).toBe(preview);
    expect(run.error).toBeUndefined();
    expect(run.usage.inputTokens).toBeGreaterThan(0);
    expect(run.usage.outputTokens).toBeGreaterThan(0);
    expect(run.latencyMs).toBeGreaterThanOrEqual(0);
    // local/echo called the attached tool once with the same-named variable, then answered.
    expect(run.toolCalls).toEqual([
      expect.objectContaining({
        toolKey,
        toolVersionId: expect.stringMatching(/^tv_/),
        input: { city: "Paris" },
        output: { temperatureC: 21, sky: "clear" },
      }),
    ]);
    expect(run.steps.map((s: Loose) => [s.stepId, s.status, s.promptId])).toEqual([
      ["forecast", "succeeded", forecast.promptId],
      ["advice", "succeeded", expect.stringMatching(/^prm_/)],
    ]);
    const [step1, step2] = run.steps;
    expect(step1.input).toEqual({ city: "Paris" });
    expect(step1.output.json.summary).toContain("Write the forecast for Paris.");
    expect(step1.toolCalls).toHaveLength(1);
    // The second step saw the first one's output through its binding.
    expect(step2.input).toEqual({ summary: step1.output.json.summary });
    expect(step2.output.text).toContain("Advise on clothing given: Write the forecast for Paris.");
    expect(run.output).toEqual(step2.output);
    expect(run.usage.inputTokens).toBe(step1.usage.inputTokens + step2.usage.inputTokens);
  }

  it("previews the skill without storing a run", async () => {
    const res = await client.post<Loose>(
      `/api/skills/${skillId}/preview`,
      { organizationId: flow.organizationId, input: { city: "Paris" } },
      { token: flow.token },
    );
    expect(res.status, res.text).toBe(200);
    expect(res.headers["x-api-stability"]).toBe("beta");
    expectSkillRun(res.body, true);
  });

  it("runs the skill, stores the run and reads it back", async () => {
    const res = await client.post<Loose>(
      `/api/skills/${skillId}/run`,
      { organizationId: flow.organizationId, input: { city: "Paris" } },
      { token: flow.token },
    );
    expect(res.status, res.text).toBe(201);
    expectSkillRun(res.body, false);
    const read = await client.get<Loose>(`/api/skill-runs/${res.body.id}`, { token: flow.token });
    expect(read.status, read.text).toBe(200);
    expect(read.body).toEqual(res.body);
  });

  it("runs a prompt and stores every field of the run", async () => {
    const res = await client.post<Loose>(
      `/api/prompts/${forecast.promptId}/run`,
      { organizationId: flow.organizationId, variables: { city: "Lyon" } },
      { token: flow.token },
    );
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({
      id: expect.stringMatching(/^run_[0-9a-f]{32}$/),
      kind: "prompt",
      status: "succeeded",
      input: { variables: { city: "Lyon" } },
      provider: "local",
      model: "local/echo",
      estimatedCostUsd: 0,
      toolCallCount: 1,
      toolCallCounts: { [toolKey]: 1 },
      promptId: forecast.promptId,
      promptVersionId: forecast.versionId,
      createdAt: ISO,
      completedAt: ISO,
    });
    expect(res.body.output.json).toEqual({ summary: expect.stringContaining("Write the forecast for Lyon.") });
    expect(res.body.toolCalls[0]).toMatchObject({
      toolKey,
      input: { city: "Lyon" },
      output: { temperatureC: 21, sky: "clear" },
    });
  });

  it("lists runs of every kind newest first, page after page (a skill run before a later prompt run)", async () => {
    const skillRun = await client.post<Loose>(
      `/api/skills/${skillId}/run`,
      { organizationId: flow.organizationId, input: { city: "Oslo" } },
      { token: flow.token },
    );
    const promptRun = await client.post<Loose>(
      `/api/prompts/${forecast.promptId}/run`,
      { organizationId: flow.organizationId, variables: { city: "Bergen" } },
      { token: flow.token },
    );
    expect([skillRun.status, promptRun.status]).toEqual([201, 201]);
    const seen: Loose[] = [];
    let cursor = "";
    do {
      const page = await client.get<Loose>(
        `/api/runs?organizationId=${flow.organizationId}&limit=1${cursor ? `&cursor=${cursor}` : ""}`,
        { token: flow.token },
      );
      expect(page.status, page.text).toBe(200);
      seen.push(...page.body.data);
      cursor = page.body.nextCursor ?? "";
    } while (cursor);
    expect(seen.slice(0, 2).map((r) => r.id)).toEqual([promptRun.body.id, skillRun.body.id]);
    const times = seen.map((r) => Date.parse(r.createdAt));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    expect(new Set(seen.map((r) => r.id)).size).toBe(seen.length);
    expect(new Set(seen.map((r) => r.kind))).toEqual(new Set(["prompt", "skill"]));
  });

  it("replays a run retried with the same Idempotency-Key", async () => {
    const body = { organizationId: flow.organizationId, variables: { city: "Nice" } };
    const headers = { "idempotency-key": `retry-${mode.name.length}-${Date.now()}` };
    const first = await client.post<Loose>(`/api/prompts/${forecast.promptId}/run`, body, {
      token: flow.token,
      headers,
    });
    const retry = await client.post<Loose>(`/api/prompts/${forecast.promptId}/run`, body, {
      token: flow.token,
      headers,
    });
    expect(first.status).toBe(201);
    expect(retry.status).toBe(201);
    expect(retry.body.id).toBe(first.body.id);
    expect(retry.headers["idempotent-replayed"]).toBe("true");
    const other = await client.post<Loose>(
      `/api/prompts/${forecast.promptId}/run`,
      { ...body, variables: { city: "Metz" } },
      { token: flow.token, headers },
    );
    expect(other.status).toBe(400);
  });

  it("refuses bad input with the documented errors and stores nothing", async () => {
    const run = (body: unknown, token = flow.token) =>
      client.post<Loose>(`/api/prompts/${forecast.promptId}/run`, body, { token });
    const badVariables = await run({ organizationId: flow.organizationId, variables: { city: 42 } });
    expect(badVariables.status).toBe(400);
    expect(badVariables.body.error.details).toContainEqual(expect.objectContaining({ field: "variables.city" }));
    const unknownModel = await run({
      organizationId: flow.organizationId,
      variables: { city: "X" },
      model: "nope/none",
    });
    expect(unknownModel.status).toBe(400);
    expect(unknownModel.body.error.details).toContainEqual(expect.objectContaining({ field: "model" }));
    const draftOnly = await client.createPrompt(flow.token, flow.organizationId);
    const nothingPublished = await client.post<Loose>(
      `/api/prompts/${draftOnly.id}/run`,
      { organizationId: flow.organizationId, variables: {} },
      { token: flow.token },
    );
    expect(nothingPublished.status).toBe(409);
    expect(nothingPublished.body.error.code).toBe("failed_precondition");
    const stranger = await runIdentityFlow(running.base);
    const otherOrg = await run({ organizationId: stranger.organizationId, variables: { city: "X" } }, stranger.token);
    expect(otherOrg.status).toBe(404);
    const badSkillInput = await client.post<Loose>(
      `/api/skills/${skillId}/run`,
      { organizationId: flow.organizationId, input: {} },
      { token: flow.token },
    );
    expect(badSkillInput.status).toBe(400);
    expect(badSkillInput.body.error.details).toContainEqual(expect.objectContaining({ field: "input.city" }));
    const strangerRead = await client.get<Loose>(`/api/skill-runs/srun_${"0".repeat(32)}`, { token: stranger.token });
    expect(strangerRead.status).toBe(404);
  });
});
