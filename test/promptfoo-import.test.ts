/**
 * promptfoo configs imported over real HTTP (issue #18, docs/bundles.md "promptfoo"): one written as
 * promptfoo's getting-started guide writes them (YAML sent as is), one like those the OpenAI Evals
 * dashboard exports (chat prompts, nested vars, templated expected values). Prompts, skills with
 * provider labels, evaluation cases with mapped assertions, and every unmapped part reported; the
 * imported skill evaluates; importing again changes nothing.
 */
import { readFileSync } from "node:fs";
import { createTestClient, type TestClient } from "@kiln/testing/test-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmbedded } from "./support/embedded.js";

type Report = {
  summary: { created: number; updated: number; skipped: number; conflicts: number };
  items: { kind: string; id: string | null; name: string; outcome: string }[];
  warnings: string[];
};
type Case = { name: string; input: Record<string, unknown>; assertions: Record<string, unknown>[] };

const fixture = (name: string) => readFileSync(new URL(`./fixtures/promptfoo/${name}`, import.meta.url), "utf8");

describe("promptfoo import", () => {
  let kiln: Awaited<ReturnType<typeof startEmbedded>>;
  let api: TestClient;
  let token: string;
  let org: string;

  beforeAll(async () => {
    kiln = await startEmbedded();
    api = createTestClient(kiln.baseUrl);
    token = (await api.signUp()).accessToken;
    org = (await api.onboard(token)).organization.id;
  });
  afterAll(() => kiln?.kiln.close());

  const casesOf = async (skillId: string) =>
    (await api.get<{ data: Case[] }>(`/api/skills/${skillId}/evaluation-cases?organizationId=${org}`, { token })).body
      .data;

  it("imports the getting-started config sent as YAML: prompts, provider versions and labels, cases, warnings", async () => {
    const yaml = fixture("getting-started.yaml");
    const r = await api.request<Report>("POST", `/api/organizations/${org}/import`, {
      token,
      rawBody: yaml,
      headers: { "content-type": "application/yaml" },
    });
    expect(r.status, r.text).toBe(200);
    // 2 prompts, 2 skills, 3 tests × 2 skills.
    expect(r.body.summary).toEqual({ created: 10, updated: 0, skipped: 0, conflicts: 0 });
    expect(r.body.warnings).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^tests\[0\]\.assert\[2\]: javascript is not imported/),
        expect.stringMatching(/^tests\[1\]\.assert\[2\]: not-contains is not imported/),
        expect.stringMatching(/^tests\[2\]\.assert\[1\]: python is not imported/),
        expect.stringMatching(/^prompts\[1\]: the filter "trim"/),
        expect.stringMatching(/^providers\[0\]: openai:gpt-4o-mini is not a model here; its versions use local\/echo/),
      ]),
    );
    const prompt = r.body.items.find((i) => i.kind === "prompt" && i.name === "Formal translation");
    const view = await api.get<{
      versions: { version: number; model: string; status: string }[];
    }>(`/api/prompts/${prompt?.id}`, { token });
    expect(view.body.versions.map((v) => [v.version, v.status])).toEqual([
      [1, "published"],
      [2, "published"],
    ]);
    const labels = await api.get<{ data: { label: string; version: number }[] }>(`/api/prompts/${prompt?.id}/labels`, {
      token,
    });
    expect(Object.fromEntries(labels.body.data.map((l) => [l.label, l.version]))).toMatchObject({
      production: 1,
      "openai-gpt-4o-mini": 1,
      "gpt-4o": 2,
    });
    const skill = r.body.items.find((i) => i.kind === "skill" && i.name === "promptfoo: Formal translation");
    const cases = await casesOf(skill?.id ?? "");
    const french = cases.find((c) => c.name === "French greeting");
    expect(french?.input).toEqual({ language: "French", input: "Hello world" });
    expect(french?.assertions).toEqual([
      { type: "max_latency_ms", value: 30000 },
      { type: "contains", value: "Hello" },
      { type: "regex", pattern: "hello WORLD", flags: "i" },
    ]);
    const german = cases.find((c) => c.name === "test 2");
    expect(german?.assertions).toContainEqual({ type: "llm_judge", rubric: "Is a translation into German" });
    expect(german?.assertions).toContainEqual({ type: "regex", pattern: "^Con" });

    // The imported skill evaluates, provider against provider through their labels.
    const run = await api.startEvaluation(token, org, skill?.id ?? "", { targets: ["openai-gpt-4o-mini", "gpt-4o"] });
    const done = await api.waitForEvaluation(token, skill?.id ?? "", run.id);
    expect(done.status, JSON.stringify(done)).toBe("completed");

    const again = await api.request<Report>("POST", `/api/organizations/${org}/import`, {
      token,
      rawBody: yaml,
      headers: { "content-type": "application/yaml" },
    });
    expect(again.body.summary).toEqual({ created: 0, updated: 0, skipped: 10, conflicts: 0 });
  });

  it("imports an OpenAI Evals dashboard export: chat messages, nested vars, templated expectations", async () => {
    const config = JSON.parse(fixture("openai-evals-export.json"));
    const r = await api.post<Report>(`/api/organizations/${org}/import`, { format: "promptfoo", config }, { token });
    expect(r.status, r.text).toBe(200);
    expect(r.body.summary.created).toBe(4);
    const promptId = r.body.items.find((i) => i.kind === "prompt")?.id;
    const prompt = await api.get<{
      version: { systemPrompt: string; developerPrompt: string; variablesSchema: unknown; temperature: number };
    }>(`/api/prompts/${promptId}`, { token });
    const v1 = prompt.body.version;
    expect(v1?.systemPrompt).toMatch(/^You are a support triage assistant/);
    expect(v1?.developerPrompt).toBe("{{item.ticket}}");
    expect(v1?.temperature).toBe(0);
    expect(v1?.variablesSchema).toEqual({
      type: "object",
      properties: {
        item: { type: "object", properties: { ticket: { type: "string" }, label: { type: "string" } } },
      },
      required: ["item"],
    });
    const skillId = r.body.items.find((i) => i.kind === "skill")?.id ?? "";
    const cases = await casesOf(skillId);
    expect(cases.find((c) => c.name === "item 1")?.assertions[0]).toEqual({ type: "equals", value: "billing" });
    expect(cases.find((c) => c.name === "item 2")?.assertions).toContainEqual({
      type: "llm_judge",
      rubric: "The answer is exactly one word",
      threshold: 0.8,
    });
    const run = await api.post<{ output: { text: string } }>(
      `/api/skills/${skillId}/run`,
      { organizationId: org, input: { item: { ticket: "Refund please", label: "billing" } } },
      { token },
    );
    expect(run.status, run.text).toBe(201);
  });

  it("imports what its dry run said it would: two prompts of one text, scenarios, a bare prompt file", async () => {
    const yaml = [
      "description: Said twice",
      "prompts:",
      "  - 'Reply to {{message}}'",
      "  - raw: 'Reply to {{message}}'",
      "    label: the same again",
      "  - prompts.txt",
      "providers: [echo]",
      "scenarios:",
      "  - config: [{vars: {tone: warm}}, {vars: {tone: dry}}]",
      "    tests: [{vars: {message: hi}, assert: [{type: contains-any, value: [-1, hi]}]}]",
    ].join("\n");
    const send = (query: string) =>
      api.request<Report & { dryRun: boolean }>("POST", `/api/organizations/${org}/import${query}`, {
        token,
        rawBody: yaml,
        headers: { "content-type": "application/yaml" },
      });
    const dry = await send("?dryRun=true");
    expect(dry.status, dry.text).toBe(200);
    const real = await send("");
    expect(real.status, real.text).toBe(200);
    expect(real.body.summary).toEqual(dry.body.summary);
    // One prompt, its skill and the scenario's two cases.
    expect(real.body.summary).toEqual({ created: 4, updated: 0, skipped: 0, conflicts: 0 });
    expect(real.body.warnings).toEqual(
      expect.arrayContaining([
        "prompts[1]: the same text as prompts[0]; imported once",
        expect.stringMatching(/^prompts\[2\]: file:\/\/prompts\.txt was not given with the config/),
      ]),
    );
    const skill = real.body.items.find((i) => i.kind === "skill");
    const cases = await casesOf(skill?.id ?? "");
    expect(cases.map((c) => c.input).sort((x, y) => String(x.tone).localeCompare(String(y.tone)))).toEqual([
      { tone: "dry", message: "hi" },
      { tone: "warm", message: "hi" },
    ]);
  });

  it("a config with no importable prompt, or that does not parse, is a 400 and imports nothing", async () => {
    const none = await api.post<Report>(
      `/api/organizations/${org}/import`,
      { format: "promptfoo", config: { prompts: ["file://prompt.txt"] } },
      { token },
    );
    expect(none.status, none.text).toBe(400);
    expect(none.body).toMatchObject({ error: { code: "invalid_argument", details: [{ field: "config.prompts" }] } });
    const broken = await api.request("POST", `/api/organizations/${org}/import`, {
      token,
      rawBody: "prompts: [unclosed",
      headers: { "content-type": "application/yaml" },
    });
    expect(broken.status).toBe(400);
  });
});
