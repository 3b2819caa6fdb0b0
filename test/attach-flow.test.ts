/**
 * The attach flow of docs/concepts.md "The attach flow", steps 1–3, over real HTTP in both run modes: create prompts and
 * versions and publish them, attach them to a draft skill version with `replacePrompts` (the second
 * step bound to the first's output), read `GET /api/skills/:id` and its `promptComposition`; then
 * publish the skill and diff its versions; and a tool's create, version and diff on the way.
 */

import { createLogger } from "@kiln/kit/logger";
import { buildEmbedded } from "@kiln/launcher/embedded";
import {
  createTestClient,
  type Prompt,
  type Skill,
  type SkillVersion,
  type TestClient,
  type TestResponse,
  type Tool,
  type ToolVersion,
  type VersionDiff,
} from "@kiln/testing/test-client";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startDistributed } from "./support/distributed.js";
import { type FlowResult, runIdentityFlow } from "./support/identity-flow.js";

const SCOPES = ["prompts:read", "prompts:write", "tools:read", "tools:write", "skills:read", "skills:write"];

interface Mode {
  name: string;
  start(): Promise<{ base: string; stop(): Promise<void> }>;
}

const modes: Mode[] = [
  {
    name: "embedded mode",
    async start() {
      const kiln = await buildEmbedded({ logger: createLogger({ name: "test", level: "silent" }) });
      const base = await kiln.gateway.app.listen({ host: "127.0.0.1", port: 0 });
      return { base, stop: () => kiln.close() };
    },
  },
  {
    name: "distributed mode (FerretDB, NATS)",
    async start() {
      const kiln = await startDistributed({ mongoUrl: inject("mongoUrl"), natsUrl: inject("natsUrl") });
      return { base: kiln.gatewayUrl, stop: () => kiln.stop() };
    },
  },
];

/** The body of a beta catalog answer with this status. */
function ok<T>(res: TestResponse<T>, status = 200): T {
  expect(res.status, res.text).toBe(status);
  expect(res.headers["x-api-stability"]).toBe("beta");
  return res.body;
}

const ISO = expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$/);

describe.each(modes)("the attach flow in $name", (mode) => {
  let running: Awaited<ReturnType<Mode["start"]>>;
  let api: TestClient;
  let flow: FlowResult;

  beforeAll(async () => {
    running = await mode.start();
    api = createTestClient(running.base);
    flow = await runIdentityFlow(running.base, SCOPES);
  }, 120_000);

  afterAll(async () => {
    await running?.stop();
  });

  // Shared by the steps below, in order.
  let weather: Tool;
  let weatherV2: ToolVersion;
  let units: Tool;
  let forecast: Prompt;
  let forecastVersionId: string;
  let brief: Prompt;
  let briefVersionId: string;
  let skill: Skill;

  const forecastSchema = {
    type: "object",
    properties: { city: { type: "string", minLength: 1 }, day: { type: "string" } },
    required: ["city"],
  };
  const forecastOutput = {
    type: "object",
    properties: { summary: { type: "string" }, temperatureC: { type: "number" } },
    required: ["summary"],
  };
  const briefSchema = {
    type: "object",
    properties: { forecast: { type: "string" }, tone: { type: "string" }, audience: { type: "string" } },
    required: ["forecast", "audience"],
  };
  const briefOutput = { type: "object", properties: { headline: { type: "string" } }, required: ["headline"] };

  it("creates a tool, versions it and diffs the versions", async () => {
    const created = await api.post<Tool>(
      "/api/tools",
      {
        organizationId: flow.organizationId,
        toolKey: "weather_lookup",
        name: "Weather lookup",
        type: "manual_stub",
        config: { result: { city: "Paris", temperatureC: 21 } },
        inputSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
      },
      { token: flow.token },
    );
    weather = ok(created, 201);
    expect(weather).toMatchObject({ organizationId: flow.organizationId, latestVersion: 1, type: "manual_stub" });
    expect(weather.id).toMatch(/^tool_/);
    expect(weather.currentVersionId).toMatch(/^tv_/);

    weatherV2 = ok(
      await api.post<ToolVersion>(
        `/api/tools/${weather.id}/versions`,
        { config: { result: { city: "Paris", temperatureC: 23 } } },
        { token: flow.apiKey },
      ),
      201,
    );
    expect(weatherV2).toMatchObject({ toolId: weather.id, version: 2, inputSchema: weather.inputSchema });

    const diff = ok(
      await api.get<VersionDiff>(`/api/tools/${weather.id}/versions/${weatherV2.id}/diff`, { token: flow.token }),
    );
    expect(diff).toEqual({
      from: { versionId: weather.currentVersionId, version: 1 },
      to: { versionId: weatherV2.id, version: 2 },
      changes: [{ op: "replace", path: "/config/result/temperatureC", before: 21, after: 23 }],
      summary: expect.any(String),
    });
    const first = ok(
      await api.get<VersionDiff>(`/api/tools/${weather.id}/versions/${weather.currentVersionId}/diff`, {
        token: flow.apiKey,
      }),
    );
    expect(first.from).toBeNull();
    expect(first.changes.every((c) => c.op === "add")).toBe(true);

    const now = ok(await api.get<Tool>(`/api/tools/${weather.id}`, { token: flow.token }));
    expect(now).toMatchObject({ currentVersionId: weatherV2.id, latestVersion: 2, config: weatherV2.config });
    units = await api.createTool(flow.apiKey, flow.organizationId, { toolKey: "unit_converter" });
  });

  it("step 1: creates prompts and their versions, then publishes the reviewed versions", async () => {
    forecast = await api.createPrompt(flow.token, flow.organizationId, {
      name: "City forecast",
      defaultModel: "local/echo",
    });
    const v1 = await api.createPromptVersion(flow.token, forecast.id, {
      systemPrompt: "Forecast the weather in {{city}}{{#day}} for {{day}}{{/day}}.",
      variablesSchema: forecastSchema,
      responseFormat: { type: "json_schema", name: "forecast", schema: forecastOutput },
      temperature: 0,
      tools: [weather.id],
    });
    expect(v1).toMatchObject({ version: 1, status: "draft", model: "local/echo", variablesSchema: forecastSchema });
    // A bare tool id pinned the tool's current version.
    expect(v1.tools).toEqual([{ toolId: weather.id, toolVersionId: weatherV2.id, toolKey: "weather_lookup" }]);
    forecastVersionId = v1.id;

    brief = await api.createPrompt(flow.apiKey, flow.organizationId, { name: "Brief" });
    const b1 = await api.createPromptVersion(flow.apiKey, brief.id, {
      systemPrompt: "Write a {{tone}} brief for {{audience}}.",
      developerPrompt: "Forecast: {{forecast}}",
      variablesSchema: briefSchema,
      responseFormat: { type: "json_schema", name: "brief", schema: briefOutput },
    });
    briefVersionId = b1.id;
    // A later draft that is not reviewed: it stays unpublished and is not what the skill pins.
    const b2 = await api.createPromptVersion(flow.apiKey, brief.id, {
      systemPrompt: "Unreviewed {{audience}}",
      variablesSchema: briefSchema,
    });

    const publishedForecast = ok(
      await api.post<Prompt>(`/api/prompts/${forecast.id}/publish`, { versionId: v1.id }, { token: flow.token }),
    );
    expect(publishedForecast).toMatchObject({ publishedVersionId: v1.id, latestVersion: 1 });
    expect(publishedForecast.version).toMatchObject({ id: v1.id, status: "published", publishedAt: ISO });
    const publishedBrief = await api.publishPrompt(flow.apiKey, brief.id, b1.id);
    expect(publishedBrief).toMatchObject({ publishedVersionId: b1.id, latestVersion: 2 });
    expect(publishedBrief.versions.map((v) => [v.id, v.status])).toEqual([
      [b1.id, "published"],
      [b2.id, "draft"],
    ]);

    const list = ok(
      await api.get<{ data: Prompt[]; nextCursor: string | null }>("/api/prompts", {
        token: flow.token,
        query: { organizationId: flow.organizationId },
      }),
    );
    expect(list.data.map((p) => p.id)).toEqual([brief.id, forecast.id]);
    expect(list.nextCursor).toBeNull();
  });

  it("step 2: attaches the prompts to a draft skill version with replacePrompts", async () => {
    skill = ok(await api.post<Skill>("/api/skills", { name: "Weather brief" }, { token: flow.apiKey }), 201);
    expect(skill).toMatchObject({
      organizationId: flow.organizationId,
      publishedVersionId: null,
      promptComposition: [],
    });
    expect(skill.draftVersionId).toMatch(/^sv_/);

    const composed = ok(
      await api.post<Skill>(
        `/api/skill-versions/${skill.draftVersionId}/prompts`,
        {
          prompts: [
            { promptId: forecast.id },
            {
              promptId: brief.id,
              promptVersionId: briefVersionId,
              alias: "brief",
              variables: { forecast: "{{steps.step1.output.summary}}", tone: "upbeat" },
            },
          ],
        },
        { token: flow.token },
      ),
    );
    expect(composed.describedVersionId).toBe(skill.draftVersionId);
    expect(composed.promptComposition).toHaveLength(2);

    const withTools = ok(
      await api.post<Skill>(
        `/api/skill-versions/${skill.draftVersionId}/tools`,
        { tools: [{ toolId: units.id, toolVersionId: units.currentVersionId }] },
        { token: flow.apiKey },
      ),
    );
    expect(withTools.tools).toEqual([
      { toolId: units.id, toolVersionId: units.currentVersionId, toolKey: "unit_converter" },
    ]);
  });

  it("step 3: GET /api/skills/:id shows the promptComposition and the derived schemas", async () => {
    const read = ok(await api.get<Skill>(`/api/skills/${skill.id}`, { token: flow.token }));
    expect(read).toMatchObject({
      id: skill.id,
      name: "Weather brief",
      draftVersionId: skill.draftVersionId,
      publishedVersionId: null,
      describedVersionId: skill.draftVersionId,
    });
    expect(read.promptComposition).toEqual([
      {
        order: 1,
        alias: "step1",
        promptId: forecast.id,
        promptVersionId: forecastVersionId,
        promptName: "City forecast",
        version: 1,
        variables: {},
      },
      {
        order: 2,
        alias: "brief",
        promptId: brief.id,
        promptVersionId: briefVersionId,
        promptName: "Brief",
        version: 1,
        variables: { forecast: "{{steps.step1.output.summary}}", tone: "upbeat" },
      },
    ]);
    // The input: step 1's variables and the brief's unbound audience; the output: the last step's schema.
    expect(read.inputSchema).toEqual({
      type: "object",
      properties: { city: { type: "string", minLength: 1 }, day: { type: "string" }, audience: { type: "string" } },
      required: ["city", "audience"],
    });
    expect(read.outputSchema).toEqual(briefOutput);
    expect(read.tools.map((t) => t.toolKey)).toEqual(["unit_converter"]);
    // An API key with skills:read reads the same.
    expect(ok(await api.get<Skill>(`/api/skills/${skill.id}`, { token: flow.apiKey }))).toEqual(read);
  });

  it("publishes the skill, opens a new draft and diffs the versions", async () => {
    const v1 = skill.draftVersionId ?? "";
    const published = ok(await api.post<Skill>(`/api/skills/${skill.id}/publish`, {}, { token: flow.token }));
    expect(published).toMatchObject({ publishedVersionId: v1, draftVersionId: null, describedVersionId: v1 });
    expect(published.versions).toEqual([
      {
        id: v1,
        version: 1,
        status: "published",
        createdAt: ISO,
        publishedAt: ISO,
        // The skill was created with the flow's API key.
        createdBy: { type: "api_key", id: expect.stringMatching(/^key_/) },
        message: null,
      },
    ]);

    // Published versions cannot change.
    const refused = await api.post(`/api/skill-versions/${v1}/prompts`, { prompts: [] }, { token: flow.token });
    expect(refused.status, refused.text).toBe(409);

    const v2 = ok(await api.post<SkillVersion>(`/api/skills/${skill.id}/versions`, {}, { token: flow.apiKey }), 201);
    expect(v2).toMatchObject({ skillId: skill.id, version: 2, status: "draft", publishedAt: null });
    expect(v2.promptComposition).toEqual(published.promptComposition);
    const second = await api.post(`/api/skills/${skill.id}/versions`, {}, { token: flow.apiKey });
    expect(second.status, second.text).toBe(409);

    await api.replaceSkillPrompts(flow.token, v2.id, [
      { promptId: forecast.id },
      {
        promptId: brief.id,
        alias: "brief",
        variables: { forecast: "{{steps.step1.output.summary}}", tone: "calm", audience: "{{input.team}}" },
      },
    ]);
    const diff = ok(
      await api.get<VersionDiff>(`/api/skills/${skill.id}/versions/${v2.id}/diff`, { token: flow.token }),
    );
    expect(diff.from).toEqual({ versionId: v1, version: 1 });
    expect(diff.to).toEqual({ versionId: v2.id, version: 2 });
    expect(diff.changes).toEqual(
      expect.arrayContaining([
        { op: "replace", path: "/promptComposition/1/variables/tone", before: "upbeat", after: "calm" },
        { op: "add", path: "/promptComposition/1/variables/audience", after: "{{input.team}}" },
      ]),
    );
    expect(diff.changes.map((c) => c.path)).toEqual(expect.arrayContaining(["/inputSchema/properties/team"]));
    expect(diff.summary).not.toBe("");

    const backwards = ok(
      await api.get<VersionDiff>(`/api/skills/${skill.id}/versions/${v1}/diff`, {
        token: flow.apiKey,
        query: { against: v2.id },
      }),
    );
    expect(backwards.from).toEqual({ versionId: v2.id, version: 2 });
    expect(backwards.changes).toContainEqual({
      op: "replace",
      path: "/promptComposition/1/variables/tone",
      before: "calm",
      after: "upbeat",
    });

    const now = ok(await api.get<Skill>(`/api/skills/${skill.id}`, { token: flow.token }));
    expect(now).toMatchObject({ draftVersionId: v2.id, publishedVersionId: v1, describedVersionId: v2.id });
    const asPublished = ok(
      await api.get<Skill>(`/api/skills/${skill.id}`, { token: flow.token, query: { versionId: v1 } }),
    );
    expect(asPublished.promptComposition).toEqual(published.promptComposition);
  });
});
