/**
 * `prompts.resolve` against a fake of the prompt routes (a `fetch` given to the client): which
 * requests a name, an id, a label or a version costs, the cache (TTL, stale-while-revalidate,
 * shared loads) and the fallback when the server cannot be reached.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { type FakePromptApi, fakePrompt, fakePromptApi } from "../test/fake-prompt-api.js";
import { Kiln } from "./kiln.js";
import { KilnError } from "./kiln-error.js";

let api: FakePromptApi;
let kiln: Kiln;
/** Three prompts; "support" has versions 1–3, 2 published, label "canary" on 3. */
let support: ReturnType<typeof fakePrompt>;

beforeEach(() => {
  vi.useFakeTimers({ toFake: ["Date"], now: new Date("2026-11-27T00:00:00Z") });
  support = fakePrompt("support", 3, 2);
  support.labels.canary = support.versions[2]?.id ?? "";
  api = fakePromptApi([fakePrompt("other", 1, 1), support, fakePrompt("draft-only", 1, null)]);
  kiln = new Kiln({ baseUrl: "http://kiln.test", apiKey: "sk_test", maxRetries: 0, fetch: api.fetch });
});

afterEach(() => {
  vi.useRealTimers();
});

/** The settled background loads: a microtask turn per awaited step of the fake. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe("prompts.resolve: which version", () => {
  it("by id answers the published version in one request", async () => {
    const prompt = await kiln.prompts.resolve(support.id);
    expect(prompt).toMatchObject({ promptId: support.id, version: 2, isFallback: false });
    expect(prompt.render().messages).toEqual([{ role: "system", content: "v2" }]);
    expect(api.requests).toEqual([`/api/prompts/${support.id}`]);
  });

  it("by name lists every page once (200 a page), then asks for the remembered id", async () => {
    api.prompts.push(...Array.from({ length: 250 }, (_, i) => fakePrompt(`filler-${i}`, 1, 1)));
    expect((await kiln.prompts.resolve("support")).versionId).toBe(support.versions[1]?.id);
    expect(api.requests).toEqual(["/api/prompts?limit=200", "/api/prompts?limit=200&cursor=200"]);
    api.requests.length = 0;
    expect((await kiln.prompts.resolve("support", { label: "latest" })).version).toBe(3);
    expect(api.requests).toEqual([
      `/api/prompts/${support.id}`,
      `/api/prompts/${support.id}?versionId=${support.versions[2]?.id}`,
    ]);
  });

  it("a label through the labels route, a version number, a version id", async () => {
    expect((await kiln.prompts.resolve(support.id, { label: "canary" })).version).toBe(3);
    expect(api.requests).toEqual([
      `/api/prompts/${support.id}/labels`,
      `/api/prompts/${support.id}?versionId=${support.versions[2]?.id}`,
    ]);
    expect((await kiln.prompts.resolve(support.id, { version: 1 })).render().messages[0]?.content).toBe("v1");
    expect((await kiln.prompts.resolve(support.id, { versionId: support.versions[0]?.id })).version).toBe(1);
    expect((await kiln.prompts.resolve(support.id, { label: "production" })).version).toBe(2);
  });

  it("refuses what names no version, with the API's errors", async () => {
    const failure = (p: Promise<unknown>) =>
      p.then(
        () => undefined,
        (e: unknown) => e as KilnError,
      );
    expect(await failure(kiln.prompts.resolve("nobody"))).toMatchObject({ status: 404, code: "not_found" });
    expect(await failure(kiln.prompts.resolve("draft-only"))).toMatchObject({
      status: 409,
      code: "failed_precondition",
    });
    expect((await kiln.prompts.resolve("draft-only", { label: "latest" })).version).toBe(1);
    expect(await failure(kiln.prompts.resolve(support.id, { label: "nope" }))).toMatchObject({ status: 404 });
    expect(await failure(kiln.prompts.resolve(support.id, { version: 9 }))).toMatchObject({ status: 404 });
    api.prompts.push(fakePrompt("support", 1, 1));
    expect(await failure(kiln.prompts.resolve("support"))).toMatchObject({
      status: 409,
      message: /2 prompts are named/,
    });
    await expect(kiln.prompts.resolve(support.id, { label: "a", version: 1 })).rejects.toThrow(TypeError);
    await expect(kiln.prompts.resolve(support.id, { version: 0 })).rejects.toThrow(/integer ≥ 1/);
    await expect(kiln.prompts.resolve(support.id, { cacheTtlMs: -1 })).rejects.toThrow(/cacheTtlMs/);
  });

  it("looks a name up again when the remembered prompt was renamed", async () => {
    await kiln.prompts.resolve("support", { cacheTtlMs: 0 });
    support.name = "support-old";
    const renamed = fakePrompt("support", 1, 1);
    api.prompts.push(renamed);
    expect((await kiln.prompts.resolve("support", { cacheTtlMs: 0 })).promptId).toBe(renamed.id);
  });
});

describe("prompts.resolve: the cache", () => {
  it("answers from memory within the TTL (the same object, no request)", async () => {
    const first = await kiln.prompts.resolve(support.id);
    const second = await kiln.prompts.resolve(support.id, { label: "production" });
    expect(second).toBe(first);
    expect(api.requests).toHaveLength(1);
  });

  it("after the TTL answers the stale value at once and revalidates in the background", async () => {
    await kiln.prompts.resolve(support.id, { cacheTtlMs: 1_000 });
    support.publishedVersionId = support.versions[2]?.id ?? null;
    support.updatedAt = "2026-11-27T00:00:01.000Z";
    vi.advanceTimersByTime(999);
    expect((await kiln.prompts.resolve(support.id, { cacheTtlMs: 1_000 })).version).toBe(2);
    expect(api.requests).toHaveLength(1);
    vi.advanceTimersByTime(1);
    expect((await kiln.prompts.resolve(support.id, { cacheTtlMs: 1_000 })).version).toBe(2);
    expect(api.requests).toHaveLength(2);
    await settle();
    expect((await kiln.prompts.resolve(support.id, { cacheTtlMs: 1_000 })).version).toBe(3);
    expect(api.requests).toHaveLength(2);
  });

  it("keeps the same object when a revalidation finds nothing changed", async () => {
    const first = await kiln.prompts.resolve(support.id, { cacheTtlMs: 10 });
    vi.advanceTimersByTime(10);
    await kiln.prompts.resolve(support.id, { cacheTtlMs: 10 });
    await settle();
    expect(api.requests).toHaveLength(2);
    expect(await kiln.prompts.resolve(support.id, { cacheTtlMs: 10 })).toBe(first);
  });

  it("shares one request between concurrent first calls", async () => {
    const all = await Promise.all(Array.from({ length: 5 }, () => kiln.prompts.resolve("support")));
    expect(new Set(all).size).toBe(1);
    expect(api.requests).toEqual(["/api/prompts?limit=200"]);
  });

  it("cacheTtlMs 0 asks every time", async () => {
    await kiln.prompts.resolve(support.id, { cacheTtlMs: 0 });
    await kiln.prompts.resolve(support.id, { cacheTtlMs: 0 });
    expect(api.requests).toHaveLength(2);
  });

  it("keeps serving a stale value while the server is down", async () => {
    await kiln.prompts.resolve(support.id, { cacheTtlMs: 10 });
    api.mode = "down";
    vi.advanceTimersByTime(60_000);
    const stale = await kiln.prompts.resolve(support.id, { cacheTtlMs: 10 });
    await settle();
    expect(stale).toMatchObject({ version: 2, isFallback: false });
    expect((await kiln.prompts.resolve(support.id, { cacheTtlMs: 10 })).version).toBe(2);
    expect(api.requests).toHaveLength(3);
  });
});

describe("prompts.resolve: the fallback", () => {
  const fallback = { systemPrompt: "Local copy for {{city}}", variablesSchema: { type: "object", required: ["city"] } };

  it("stands in when the server is unreachable or overloaded and nothing is cached", async () => {
    api.mode = "down";
    const down = await kiln.prompts.resolve("support", { fallback });
    expect(down).toMatchObject({ isFallback: true, promptId: null, versionId: null, version: null });
    expect(down.fallbackCause).toBeInstanceOf(TypeError);
    expect(down.render({ city: "Oslo" })).toMatchObject({
      messages: [{ role: "system", content: "Local copy for Oslo" }],
      isFallback: true,
      model: null,
    });
    expect(() => down.render({})).toThrow(KilnError);
    api.mode = "overloaded";
    const overloaded = await kiln.prompts.resolve(support.id, { fallback });
    expect(overloaded.fallbackCause).toMatchObject({ status: 503 });
    // Not cached: once the server is back, its answer is used.
    api.mode = "up";
    expect((await kiln.prompts.resolve(support.id, { fallback })).isFallback).toBe(false);
  });

  it("is not used for a 4xx, and without one the error is thrown", async () => {
    await expect(kiln.prompts.resolve("nobody", { fallback })).rejects.toMatchObject({ status: 404 });
    api.mode = "down";
    await expect(kiln.prompts.resolve(support.id)).rejects.toThrow(TypeError);
    api.mode = "overloaded";
    await expect(kiln.prompts.resolve(support.id)).rejects.toMatchObject({ status: 503, code: "unavailable" });
  });
});
