/**
 * Hostile input from outside (issue #15), in both run modes: tenant-written regular expressions
 * run in linear time or are refused when saved, a schema that refers back to itself is refused,
 * bodies nested deeper than the limit are refused before anything recurses, and a control
 * character in a path id names nothing. Every answer is the error envelope, never a 5xx.
 */
import { createTestClient, type TestClient } from "@kiln/testing/test-client";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startDistributed } from "./support/distributed.js";
import { startEmbedded } from "./support/embedded.js";

const modes = [
  {
    name: "embedded mode",
    async start() {
      const { kiln, baseUrl } = await startEmbedded();
      return { base: baseUrl, stop: () => kiln.close() };
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

/** `{"a":{"a":…}}` nested `depth` levels around `leaf`, as text (JSON.stringify would recurse). */
const nested = (depth: number, leaf = "1") => `${'{"a":'.repeat(depth)}${leaf}${"}".repeat(depth)}`;

describe.each(modes)("hostile input in $name", (mode) => {
  let running: Awaited<ReturnType<(typeof modes)[number]["start"]>>;
  let api: TestClient;
  let token: string;
  let organizationId: string;

  beforeAll(async () => {
    running = await mode.start();
    api = createTestClient(running.base);
    ({ accessToken: token } = await api.signUp());
    ({
      organization: { id: organizationId },
    } = await api.onboard(token));
  }, 120_000);

  afterAll(async () => {
    await running?.stop();
  });

  const post = (path: string, text: string) =>
    api.request("POST", path, { token, rawBody: text, headers: { "content-type": "application/json" } });

  it("runs a catastrophic pattern against a hostile value in linear time, the server answering meanwhile", async () => {
    const { prompt } = await api.createPublishedPrompt(token, organizationId, {
      systemPrompt: "Hello {{name}}",
      variablesSchema: {
        type: "object",
        properties: { name: { type: "string", pattern: "^(a+)+$" } },
        propertyNames: { pattern: "^(name|(a+)+)$" },
        required: ["name"],
      },
    });
    // With backtracking, 40 characters take hours; every other request would wait for them.
    const hostile = `${"a".repeat(40)}!`;
    const [run, health] = await Promise.all([
      api.post(`/api/prompts/${prompt.id}/run`, { organizationId, variables: { name: hostile } }, { token }),
      api.get("/healthz"),
    ]);
    expect(health.status).toBe(200);
    expect(run.status, run.text).toBe(400);
    expect(run.body).toMatchObject({
      error: {
        code: "invalid_argument",
        details: [{ field: "variables.name", issue: 'must match pattern "^(a+)+$"' }],
      },
    });
    const keys = await api.post(
      `/api/prompts/${prompt.id}/run`,
      { organizationId, variables: { name: "aaa", [`${"a".repeat(40)}!`]: 1 } },
      { token },
    );
    expect(keys.status, keys.text).toBe(400);
  });

  it("refuses, when saved, a pattern RE2 cannot run, naming where it is", async () => {
    const created = await api.createPrompt(token, organizationId);
    const res = await api.post(
      `/api/prompts/${created.id}/versions`,
      {
        systemPrompt: "Hi {{x}}",
        variablesSchema: { type: "object", properties: { x: { type: "string", pattern: "^(a)\\1$" } } },
      },
      { token },
    );
    expect(res.status, res.text).toBe(400);
    expect(res.body).toMatchObject({
      error: { code: "invalid_argument", details: [{ field: "variablesSchema.properties.x.pattern" }] },
    });
  });

  it("refuses a schema whose $ref refers back to the same value", async () => {
    const created = await api.createPrompt(token, organizationId);
    const res = await api.post(
      `/api/prompts/${created.id}/versions`,
      { systemPrompt: "Hi", variablesSchema: { type: "object", $ref: "#" } },
      { token },
    );
    expect(res.status, res.text).toBe(400);
    expect(res.body).toMatchObject({
      error: { code: "invalid_argument", details: [{ field: "variablesSchema.$ref" }] },
    });
    const read = await api.get<{ latestVersion: number }>(`/api/prompts/${created.id}`, { token });
    expect(read.body.latestVersion).toBe(0);
  });

  it("refuses an output token limit beyond what the wire carries with 400 on the field, not 500 (found by the fuzzer)", async () => {
    const created = await api.createPrompt(token, organizationId);
    for (const maxOutputTokens of [9007199254740992, -9007199254740992, 2 ** 31, 200_000]) {
      const res = await api.post(
        `/api/prompts/${created.id}/versions`,
        { systemPrompt: "Hi", maxOutputTokens },
        { token },
      );
      expect(res.status, `${maxOutputTokens}: ${res.text}`).toBe(400);
      expect(res.body).toMatchObject({
        error: {
          code: "invalid_argument",
          details: expect.arrayContaining([expect.objectContaining({ field: "maxOutputTokens" })]),
        },
      });
    }
  });

  it("refuses bodies nested deeper than the limit before anything recurses", async () => {
    const tool = await post(
      "/api/tools",
      `{"organizationId":"${organizationId}","toolKey":"deep","name":"Deep","type":"manual_stub","config":{"result":${nested(10_000)}}}`,
    );
    expect(tool.status, tool.text).toBe(400);
    expect(tool.body).toMatchObject({ error: { code: "invalid_argument", details: [{ field: "body" }] } });
    const run = await post(
      "/api/prompts/prm_00000000000000000000000000000000/run",
      `{"organizationId":"${organizationId}","variables":${nested(10_000)}}`,
    );
    expect(run.status, run.text).toBe(400);
    const when = `${'{"!":'.repeat(5_000)}true${"}".repeat(5_000)}`;
    const workflow = await api.request("PUT", "/api/agent-versions/av_00000000000000000000000000000000/workflow", {
      token,
      rawBody: `{"workflow":{"entry":"a","steps":[{"id":"a","type":"tool","ref":{"toolId":"x"},"next":[{"when":${when},"to":"a"}]}]}}`,
      headers: { "content-type": "application/json" },
    });
    expect(workflow.status, workflow.text).toBe(400);
    // Within the limit, nesting is fine.
    const fine = await post(
      "/api/tools",
      `{"organizationId":"${organizationId}","toolKey":"nested_ok","name":"Nested","type":"manual_stub","inputSchema":{"type":"object"},"config":{"result":${nested(40)}}}`,
    );
    expect(fine.status, fine.text).toBe(201);
  });

  it("answers 404 for an id holding a control character, on every kind of id route", async () => {
    for (const path of [
      "/api/prompts/%00",
      "/api/tools/a%00b",
      "/api/skills/%01",
      "/api/agents/%00",
      "/api/agent-runs/%7f",
      "/api/skill-runs/%00",
    ]) {
      const res = await api.get(path, { token });
      expect(res.status, `${path}: ${res.text}`).toBe(404);
      expect(res.body).toMatchObject({ error: { code: "not_found" } });
    }
  });
});
