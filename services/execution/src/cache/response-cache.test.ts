import { LIMITS } from "@kiln/kit/limits";
import type { Logger } from "@kiln/kit/logger";
import type { Store } from "@kiln/kit/store";
import { createMemoryStore } from "@kiln/kit/store/memory";
import { describe, expect, it, vi } from "vitest";
import { type CachedAnswer, createResponseCache, startResponseCacheSweeper } from "./response-cache.js";
import { responseKeyOf } from "./response-key.js";

const logger = () => ({ warn: vi.fn(), info: vi.fn() }) as unknown as Logger & { warn: ReturnType<typeof vi.fn> };
const answer = (text: string): CachedAnswer => ({
  output: { text },
  provider: "stub",
  model: "m",
  usage: { inputTokens: 3, outputTokens: 4 },
  costUsd: 0.5,
  sourceRunId: "run_1",
});

/** A store whose every read and write fails, as a store that went away. */
function brokenStore(): Store {
  const fail = () => Promise.reject(new Error("connection refused"));
  const store = createMemoryStore();
  return {
    ...store,
    collection: () => new Proxy({}, { get: () => fail }) as never,
  };
}

describe("the response cache's entries", () => {
  it("answers an entry to its organization only, within its TTL and the request's max age", async () => {
    let now = new Date("2026-12-02T10:00:00Z");
    const cache = createResponseCache(createMemoryStore(), logger(), () => now);
    await cache.keep("org_a", "k1", answer("hello"), 60);
    expect(await cache.lookup("org_a", "k1", 60)).toEqual(answer("hello"));
    expect(await cache.lookup("org_b", "k1", 60)).toBeNull();
    now = new Date(now.getTime() + 30_000);
    expect(await cache.lookup("org_a", "k1", 10)).toBeNull();
    expect(await cache.lookup("org_a", "k1", 60)).not.toBeNull();
    now = new Date(now.getTime() + 30_000);
    expect(await cache.lookup("org_a", "k1", 600)).toBeNull();
  });

  it("keeps no answer over the entry cap", async () => {
    const cache = createResponseCache(createMemoryStore(), logger());
    await cache.keep("org_a", "big", answer("x".repeat(LIMITS.cacheEntryBytes)), 60);
    await cache.keep("org_a", "small", answer("x".repeat(1000)), 60);
    expect(await cache.lookup("org_a", "big", 60)).toBeNull();
    expect(await cache.lookup("org_a", "small", 60)).not.toBeNull();
  });

  it("reads a failing store as a miss and a failed keep as nothing, logging both", async () => {
    const log = logger();
    const cache = createResponseCache(brokenStore(), log);
    expect(await cache.lookup("org_a", "k1", 60)).toBeNull();
    await expect(cache.keep("org_a", "k1", answer("hello"), 60)).resolves.toBeUndefined();
    expect(log.warn).toHaveBeenCalledTimes(2);
  });

  it("sweeps expired entries away", async () => {
    const store = createMemoryStore();
    let now = new Date(Date.now() - 10_000);
    const cache = createResponseCache(store, logger(), () => now);
    await cache.keep("org_a", "old", answer("old"), 1);
    now = new Date();
    await cache.keep("org_a", "new", answer("new"), 60);
    const sweeper = await startResponseCacheSweeper(store, logger(), 3_600_000);
    expect(await sweeper.runOnce()).toBe(1);
    await sweeper.stop();
    expect(await store.collection("response_cache").countDocuments({})).toBe(1);
  });
});

describe("the response cache's key", () => {
  const input = {
    organizationId: "org_a",
    promptVersionId: "pv_1",
    model: "stub/m",
    messages: [{ role: "system" as const, content: "Hi" }],
    tools: [],
    responseFormat: { type: "text" as const },
    parameters: { temperature: 0.2, maxOutputTokens: 100 },
  };

  it("is the same for the same request however its keys are ordered, and differs with any part", () => {
    const key = responseKeyOf(input);
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    expect(responseKeyOf({ ...input, parameters: { maxOutputTokens: 100, temperature: 0.2 } })).toBe(key);
    for (const changed of [
      { organizationId: "org_b" },
      { promptVersionId: "pv_2" },
      { model: "stub/n" },
      { connectionId: "conn_1" },
      { messages: [{ role: "system" as const, content: "Hi!" }] },
      { tools: [{ name: "t" }] },
      { toolChoice: "required" as const },
      { responseFormat: { type: "json_object" as const } },
      { parameters: { temperature: 0.3, maxOutputTokens: 100 } },
    ]) {
      expect(responseKeyOf({ ...input, ...changed })).not.toBe(key);
    }
  });
});
