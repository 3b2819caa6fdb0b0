/**
 * The response cache's defaults (docs/cache.md "Defaults") over real HTTP in both run modes,
 * against a provider stub that counts its calls: a version's `cacheTtlSeconds` answers the second
 * identical run from the cache without any header; `Kiln-Cache: no-store` bypasses it and a
 * header's TTL wins over it; a label's default applies to runs through the label (production for
 * a plain run and for `kiln/<prompt>` on /v1) and wins over the version's, never to a run of the
 * version by id; the default expires; bad defaults are 400s naming the field that change nothing.
 */

import { Kiln } from "@kiln/sdk";
import { type OpenAIStub, startOpenAIStub, stubReply } from "@kiln/testing/openai-stub";
import { createTestClient } from "@kiln/testing/test-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, type FlowResult, runIdentityFlow } from "./support/identity-flow.js";
import { PROVIDER_MODES, type RunningKiln } from "./support/provider-modes.js";

// biome-ignore lint/suspicious/noExplicitAny: runs are read loosely and asserted on.
type Loose = any;

const providersOf = (stub: OpenAIStub) =>
  JSON.stringify([
    { id: "stub", baseUrl: stub.baseUrl, models: [{ model: "m", inputPerMTokUsd: 1, outputPerMTokUsd: 2 }] },
  ]);
const SCOPES = ["prompts:read", "prompts:write", "runs:write", "runs:read", "skills:read", "skills:write"];

describe.each(PROVIDER_MODES)("the response cache's defaults in $name", (mode) => {
  let stub: OpenAIStub;
  let running: RunningKiln;
  let flow: FlowResult;
  let answers = 0;

  beforeAll(async () => {
    stub = await startOpenAIStub({
      respond: () => stubReply.text(`answer ${++answers}`, { usage: { prompt_tokens: 10, completion_tokens: 5 } }),
    });
    running = await mode.start({ OPENAI_COMPATIBLE_PROVIDERS: providersOf(stub) });
    flow = await runIdentityFlow(running.base, SCOPES);
  }, 180_000);
  afterAll(async () => {
    await running?.stop();
    await stub?.close();
  });

  /** A published prompt whose one version has `cacheTtlSeconds` (none when undefined). */
  async function publishedPrompt(cacheTtlSeconds?: number) {
    const { prompt, version } = await createTestClient(running.base).createPublishedPrompt(
      flow.token,
      flow.organizationId,
      {
        model: "stub/m",
        systemPrompt: "Greet {{person}}.",
        variablesSchema: { type: "object", properties: { person: { type: "string" } } },
        ...(cacheTtlSeconds !== undefined && { cacheTtlSeconds }),
      },
    );
    expect(version.cacheTtlSeconds).toBe(cacheTtlSeconds ?? null);
    return { promptId: prompt.id, versionId: version.id };
  }

  const run = (promptId: string, body: Loose = {}, cache?: string) =>
    call(running.base, "POST", `/api/prompts/${promptId}/run`, {
      token: flow.token,
      body: { organizationId: flow.organizationId, variables: { person: "Ada" }, ...body },
      headers: cache === undefined ? {} : { "kiln-cache": cache },
    });

  const putLabel = (promptId: string, label: string, body: Loose) =>
    call(running.base, "PUT", `/api/prompts/${promptId}/labels/${label}`, { token: flow.token, body });

  /** The run's cache status header and field, and how many provider calls it made. */
  async function outcome(ran: Promise<Loose>) {
    const before = stub.requests.length;
    const r = await ran;
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    return { header: r.headers.get("kiln-cache-status"), cache: r.body.cache, calls: stub.requests.length - before };
  }

  it("answers a version's second identical run from the cache with no header and no provider call", async () => {
    const { promptId } = await publishedPrompt(60);
    const variables = { person: `Grace ${Date.now()}` };
    expect(await outcome(run(promptId, { variables }))).toEqual({
      header: "miss",
      cache: { status: "miss", ttlSeconds: 60, ttlSource: "version" },
      calls: 1,
    });
    const hit = await outcome(run(promptId, { variables }));
    expect(hit).toMatchObject({ header: "hit", calls: 0 });
    expect(hit.cache).toMatchObject({ status: "hit", ttlSeconds: 60, ttlSource: "version" });
    // Its stream answers from the cache too.
    const res = await fetch(`${running.base}/api/prompts/${promptId}/run/stream`, {
      method: "POST",
      headers: { authorization: `Bearer ${flow.token}`, "content-type": "application/json" },
      body: JSON.stringify({ organizationId: flow.organizationId, variables }),
    });
    expect(res.headers.get("kiln-cache-status")).toBe("hit");
    expect(await res.text()).toContain('"ttlSource":"version"');
  });

  it("is bypassed by Kiln-Cache: no-store and overridden by the header's TTL", async () => {
    const { promptId } = await publishedPrompt(60);
    const variables = { person: `Alan ${Date.now()}` };
    expect((await outcome(run(promptId, { variables }))).header).toBe("miss");
    expect(await outcome(run(promptId, { variables }, "no-store"))).toEqual({
      header: null,
      cache: undefined,
      calls: 1,
    });
    const asked = await outcome(run(promptId, { variables }, "ttl=30"));
    expect(asked).toMatchObject({ header: "hit", calls: 0, cache: { ttlSeconds: 30, ttlSource: "request" } });
  });

  it("applies a label's default to runs through the label, over the version's, and not to the version by id", async () => {
    const { promptId, versionId } = await publishedPrompt(5);
    const staged = await putLabel(promptId, "staging", { versionId, cacheTtlSeconds: 120 });
    expect(staged.status, JSON.stringify(staged.body)).toBe(200);
    expect(staged.body).toMatchObject({ label: "staging", versionId, cacheTtlSeconds: 120 });
    const variables = { person: `Barbara ${Date.now()}` };
    expect(await outcome(run(promptId, { variables, label: "staging" }))).toMatchObject({
      header: "miss",
      cache: { status: "miss", ttlSeconds: 120, ttlSource: "label" },
    });
    expect(await outcome(run(promptId, { variables, label: "staging" }))).toMatchObject({
      header: "hit",
      calls: 0,
      cache: { ttlSource: "label" },
    });

    // A prompt whose version has no default: only runs through the label use the cache.
    const plain = await publishedPrompt();
    expect(
      (await putLabel(plain.promptId, "staging", { versionId: plain.versionId, cacheTtlSeconds: 60 })).status,
    ).toBe(200);
    expect((await outcome(run(plain.promptId, { variables, label: "staging" }))).header).toBe("miss");
    for (let i = 0; i < 2; i++) {
      expect(await outcome(run(plain.promptId, { variables, versionId: plain.versionId }))).toEqual({
        header: null,
        cache: undefined,
        calls: 1,
      });
    }
    // Nor does a plain run (production) until production has a default of its own.
    expect((await outcome(run(plain.promptId, { variables }))).header).toBeNull();
    const production = await putLabel(plain.promptId, "production", {
      versionId: plain.versionId,
      cacheTtlSeconds: 90,
    });
    expect(production.body).toMatchObject({ label: "production", cacheTtlSeconds: 90 });
    expect((await outcome(run(plain.promptId, { variables }))).cache).toMatchObject({
      ttlSeconds: 90,
      ttlSource: "label",
    });

    // null removes a label's default (here through the SDK).
    const sdk = new Kiln({ baseUrl: running.base, accessToken: flow.token });
    const cleared = await sdk.prompts.labels.set(plain.promptId, "staging", {
      versionId: plain.versionId,
      cacheTtlSeconds: null,
    });
    expect(cleared.cacheTtlSeconds).toBeNull();
    expect((await outcome(run(plain.promptId, { variables, label: "staging" }))).header).toBeNull();
  });

  it("caches /v1/chat/completions by production's default and by a label's, with no header", async () => {
    const { promptId, versionId } = await publishedPrompt();
    expect((await putLabel(promptId, "production", { versionId, cacheTtlSeconds: 60 })).status).toBe(200);
    expect((await putLabel(promptId, "canary", { versionId, cacheTtlSeconds: 60 })).status).toBe(200);
    const content = `Hello ${Date.now()}`;
    const chat = (model: string) =>
      fetch(`${running.base}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${flow.apiKey}`, "content-type": "application/json" },
        body: JSON.stringify({ model, messages: [{ role: "user", content }] }),
      });
    for (const model of [`kiln/${promptId}`, `kiln/${promptId}@canary`]) {
      const before = stub.requests.length;
      const first = await chat(model);
      expect(first.status).toBe(200);
      expect(first.headers.get("kiln-cache-status")).toBe(model.includes("@") ? "hit" : "miss");
      const second = await chat(model);
      expect(second.headers.get("kiln-cache-status")).toBe("hit");
      expect(((await second.json()) as Loose).choices[0].message.content).toMatch(/^answer /);
      // The second model name runs the same version: its first answer is the first name's entry.
      expect(stub.requests.length - before).toBe(model.includes("@") ? 0 : 1);
    }
  });

  it("lets a default expire", async () => {
    const { promptId } = await publishedPrompt(1);
    const variables = { person: `Edsger ${Date.now()}` };
    expect((await outcome(run(promptId, { variables }))).header).toBe("miss");
    expect((await outcome(run(promptId, { variables }))).header).toBe("hit");
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect(await outcome(run(promptId, { variables }))).toMatchObject({ header: "miss", calls: 1 });
  });

  it("refuses a bad cacheTtlSeconds on a version or a label with 400 naming it, changing nothing", async () => {
    const { promptId, versionId } = await publishedPrompt();
    expect((await putLabel(promptId, "staging", { versionId, cacheTtlSeconds: 30 })).status).toBe(200);
    const read = async () => ({
      prompt: (await call(running.base, "GET", `/api/prompts/${promptId}`, { token: flow.token })).body,
      labels: (await call(running.base, "GET", `/api/prompts/${promptId}/labels`, { token: flow.token })).body,
    });
    const before = await read();
    for (const cacheTtlSeconds of [0, 604_801, 1.5, "x"]) {
      const version = await call(running.base, "POST", `/api/prompts/${promptId}/versions`, {
        token: flow.token,
        body: { systemPrompt: "x", cacheTtlSeconds },
      });
      const label = await putLabel(promptId, "staging", { versionId, cacheTtlSeconds });
      for (const refused of [version, label]) {
        expect(refused.status).toBe(400);
        expect(refused.body.error).toMatchObject({
          code: "invalid_argument",
          details: expect.arrayContaining([expect.objectContaining({ field: "cacheTtlSeconds" })]),
        });
      }
    }
    // A skill's label takes no default: its runs do not use the cache.
    const skill = await createTestClient(running.base).createSkill(flow.token, flow.organizationId);
    const skillLabel = await call(running.base, "PUT", `/api/skills/${skill.id}/labels/staging`, {
      token: flow.token,
      body: { versionId: skill.draftVersionId, cacheTtlSeconds: 30 },
    });
    expect(skillLabel.status).toBe(400);
    expect(skillLabel.body.error.details).toEqual([expect.objectContaining({ field: "cacheTtlSeconds" })]);
    expect(await read()).toEqual(before);
    // The bounds themselves are taken.
    for (const cacheTtlSeconds of [1, 604_800]) {
      const version = await call(running.base, "POST", `/api/prompts/${promptId}/versions`, {
        token: flow.token,
        body: { systemPrompt: "x", cacheTtlSeconds },
      });
      expect(version.status).toBe(201);
      expect(version.body.cacheTtlSeconds).toBe(cacheTtlSeconds);
    }
  });
});
