import { DomainError } from "@kiln/kit/errors";
import type { Principal } from "@kiln/kit/principal";
import type { ModelResult } from "@kiln/models/provider";
import type { ProviderRegistry, ResolvedModel } from "@kiln/models/registry";
import { describe, expect, it } from "vitest";
import { stepDeps } from "../runs/store-run.js";
import type { RunDoc } from "../store/run-store.js";
import { countingRegistry } from "./counting-registry.js";
import { apiKeyLimitOf, createTokenLimits, limitList, modelLimitOf, type TokenLimit } from "./token-limits.js";
import { createTokenWindow } from "./token-window.js";

const KEY = "key_00000000000000000000000000000001";
const OTHER_KEY = "key_00000000000000000000000000000002";
const T0 = Date.UTC(2026, 11, 3, 12, 0, 0);

const keyPrincipal = (id: string, tokensPerMinute?: number): Principal => ({
  type: "api_key",
  id,
  organizationId: "org_1",
  scopes: ["runs:write"],
  ...(tokensPerMinute !== undefined && { tokensPerMinute }),
});

const entry = (id: string, extra: Record<string, unknown> = {}) =>
  ({
    id,
    provider: id.split("/")[0],
    model: id.split("/")[1],
    available: true,
    capabilities: { tools: false, jsonSchema: false, input: ["text"] },
    pricing: { inputPerMTokUsd: null, outputPerMTokUsd: null },
    ...extra,
  }) as ResolvedModel["entry"];

const run = (kind: RunDoc["kind"], inputTokens: number, outputTokens: number, extra: Partial<RunDoc> = {}) =>
  ({ _id: "run_1", kind, usage: { inputTokens, outputTokens }, ...extra }) as RunDoc;

/** A clock the test moves. */
function clock(start = T0) {
  let at = start;
  return { now: () => at, advance: (ms: number) => (at += ms) };
}

function refusalOf(fn: () => void): DomainError {
  try {
    fn();
  } catch (e) {
    if (e instanceof DomainError) return e;
    throw e;
  }
  throw new Error("not refused");
}

describe("the one-minute window", () => {
  it("holds the tokens of the last 60 seconds and lets each second go 60 s after it began", () => {
    const w = createTokenWindow();
    w.add(T0 + 200, 100);
    w.add(T0 + 10_500, 50);
    expect(w.total(T0 + 59_999)).toBe(150);
    // The first second left at T0 + 60 s; the second's tokens stay until T0 + 70 s.
    expect(w.total(T0 + 60_000)).toBe(50);
    expect(w.total(T0 + 69_999)).toBe(50);
    expect(w.total(T0 + 70_000)).toBe(0);
  });

  it("reuses a bucket a minute later without the old second's tokens", () => {
    const w = createTokenWindow();
    w.add(T0, 100);
    w.add(T0 + 60_000, 7);
    expect(w.total(T0 + 60_000)).toBe(7);
  });

  it("says the seconds until enough of it has left to be under a limit", () => {
    const w = createTokenWindow();
    w.add(T0, 600);
    w.add(T0 + 20_000, 600);
    const at = T0 + 30_400;
    expect(w.secondsUntilUnder(at, 2_000)).toBe(0);
    // Under 1000 once the first second left (T0 + 60 s): 29.6 s from now, rounded up.
    expect(w.secondsUntilUnder(at, 1_000)).toBe(30);
    // Under 500 only once both left (T0 + 80 s).
    expect(w.secondsUntilUnder(at, 500)).toBe(50);
    // Never less than one second.
    expect(w.secondsUntilUnder(T0 + 59_999, 700)).toBe(1);
  });
});

describe("token-per-minute limits", () => {
  it("refuses a key's run once its runs' tokens reach the limit, naming the key, with Retry-After", () => {
    const c = clock();
    const limits = createTokenLimits({ now: c.now });
    const start = { tokenLimits: limitList(apiKeyLimitOf(keyPrincipal(KEY, 1_000))) };
    limits.admit(start);
    limits.finished(start, run("prompt", 500, 100));
    c.advance(5_000);
    limits.admit(start);
    limits.finished(start, run("prompt", 300, 100));
    c.advance(1_000);
    const refused = refusalOf(() => limits.admit(start));
    expect(refused.kind).toBe("resource_exhausted");
    expect(refused.details).toEqual([{ field: "tokensPerMinute", issue: `api_key:${KEY}` }]);
    expect(refused.message).toContain(`API key ${KEY} allows 1000 tokens a minute and 1000 were used`);
    // Enough left once the first run's second left the window: 60 s after it, 54 s from now.
    expect(refused.retryAfterSeconds).toBe(54);
    c.advance(54_000);
    expect(() => limits.admit(start)).not.toThrow();
  });

  it("counts a key and a model apart: another key runs, and a model's limit refuses its runs only", () => {
    const c = clock();
    const limits = createTokenLimits({ now: c.now });
    const model = { id: "stub/limited", entry: entry("stub/limited", { tokensPerMinute: 500 }) };
    const free = { id: "stub/free", entry: entry("stub/free") };
    const limit = modelLimitOf(model) as TokenLimit;
    expect(limit).toEqual({
      window: "model:stub/limited",
      issue: "model:stub/limited",
      tokensPerMinute: 500,
      counts: "call",
    });
    expect(modelLimitOf(free)).toBeUndefined();
    const first = { tokenLimits: limitList(apiKeyLimitOf(keyPrincipal(KEY, 10_000)), limit) };
    limits.admit(first);
    limits.counted(limit, 600);
    // A model's window counts calls, not the run's end: the run finishing adds only to its key's.
    limits.finished(first, run("prompt", 500, 100));
    expect(limits.used("model:stub/limited")).toBe(600);
    expect(limits.used(`api_key:${KEY}`)).toBe(600);
    const onModel = { tokenLimits: limitList(apiKeyLimitOf(keyPrincipal(OTHER_KEY, 10_000)), limit) };
    const refused = refusalOf(() => limits.admit(onModel));
    expect(refused.details).toEqual([{ field: "tokensPerMinute", issue: "model:stub/limited" }]);
    expect(refused.message).toContain("model stub/limited allows 500 tokens a minute");
    // The same keys on another model, and a key without a limit: admitted.
    limits.admit({ tokenLimits: limitList(apiKeyLimitOf(keyPrincipal(KEY, 10_000)), modelLimitOf(free)) });
    limits.admit({ tokenLimits: limitList(apiKeyLimitOf(keyPrincipal(OTHER_KEY))) });
  });

  it("a route is refused only while every target's minute is spent, and a spent target is held back with its wait", () => {
    const c = clock();
    const limits = createTokenLimits({ now: c.now });
    const one = { id: "stub/one", entry: entry("stub/one", { tokensPerMinute: 100 }) } as ResolvedModel;
    const two = { id: "stub/two", entry: entry("stub/two", { tokensPerMinute: 200 }) } as ResolvedModel;
    const free = { id: "stub/free", entry: entry("stub/free") } as ResolvedModel;
    const route = { id: "route/r", entry: entry("route/r"), targets: [one, two] };
    const limit = modelLimitOf(route) as TokenLimit;
    expect(limit).toMatchObject({ window: "route:route/r", issue: "model:route/r", counts: "call" });
    expect(limit.anyOf?.map((l) => l.window)).toEqual(["model:stub/one", "model:stub/two"]);
    // A route with a target without a limit has none.
    expect(modelLimitOf({ ...route, targets: [one, free] })).toBeUndefined();
    const start = { tokenLimits: limitList(limit) };
    limits.counted(modelLimitOf(one) as TokenLimit, 100);
    expect(limits.holdBack(one)).toMatchObject({ status: 429, retryAfterMs: 60_000 });
    expect(limits.holdBack(two)).toBeUndefined();
    expect(limits.holdBack(free)).toBeUndefined();
    limits.admit(start);
    c.advance(10_000);
    limits.counted(modelLimitOf(two) as TokenLimit, 250);
    const refused = refusalOf(() => limits.admit(start));
    expect(refused.details).toEqual([{ field: "tokensPerMinute", issue: "model:route/r" }]);
    expect(refused.message).toContain("every target of model route/r has used its tokens a minute");
    // The soonest target's wait: one's tokens leave 50 s from now, two's 60 s.
    expect(refused.retryAfterSeconds).toBe(50);
    c.advance(50_000);
    expect(() => limits.admit(start)).not.toThrow();
    expect(limits.holdBack(one)).toBeUndefined();
  });

  it("a connection's model counts in that connection's window, a deployment model's in one for every organization", () => {
    const a = modelLimitOf({ id: "mine/m", entry: entry("mine/m", { tokensPerMinute: 5, connectionId: "conn_a" }) });
    const b = modelLimitOf({ id: "mine/m", entry: entry("mine/m", { tokensPerMinute: 5, connectionId: "conn_b" }) });
    expect(a?.window).toBe("connection:conn_a:mine/m");
    expect(b?.window).toBe("connection:conn_b:mine/m");
    expect(a?.issue).toBe("model:mine/m");
  });

  it("a key's new limit holds at its next run, over the tokens already counted", () => {
    const c = clock();
    const limits = createTokenLimits({ now: c.now });
    const at = (tpm: number) => ({ tokenLimits: limitList(apiKeyLimitOf(keyPrincipal(KEY, tpm))) });
    limits.admit(at(5_000));
    limits.finished(at(5_000), run("prompt", 1_500, 500));
    limits.admit(at(5_000));
    // Lowered under what the minute used: refused; raised again: admitted.
    expect(refusalOf(() => limits.admit(at(2_000))).details[0]?.issue).toBe(`api_key:${KEY}`);
    limits.admit(at(2_001));
  });

  it("counts no agent run of its own, no cache hit, no failed store, and nothing for a run with no limits", () => {
    const limits = createTokenLimits({ now: clock().now });
    const start = { tokenLimits: limitList(apiKeyLimitOf(keyPrincipal(KEY, 100))) };
    limits.finished(start, run("agent", 1_000, 1_000));
    limits.finished(start, run("prompt", 1_000, 1_000, { cache: { status: "hit" } }));
    limits.finished(start, undefined);
    limits.finished({}, run("prompt", 1_000, 1_000));
    expect(limits.used(`api_key:${KEY}`)).toBe(0);
    limits.admit(start);
  });

  it("an agent's steps are never refused, and their tokens count in the agent's key's window", () => {
    const limits = createTokenLimits({ now: clock().now });
    const keyLimits = limitList(apiKeyLimitOf(keyPrincipal(KEY, 100))) ?? [];
    limits.finished({ tokenLimits: keyLimits }, run("prompt", 100, 0));
    const deps = stepDeps({ runs: {}, outbox: {}, tokenLimits: limits } as never, keyLimits) as {
      tokenLimits: typeof limits;
    };
    // The step carries no key of its own (its run is not the key's in the ledger).
    expect(() => deps.tokenLimits.admit({ tokenLimits: keyLimits })).not.toThrow();
    deps.tokenLimits.finished({}, run("prompt", 40, 2));
    expect(limits.used(`api_key:${KEY}`)).toBe(142);
  });

  it("keeps at most maxWindows windows, dropping idle ones first", () => {
    const c = clock();
    const limits = createTokenLimits({ now: c.now, maxWindows: 2 });
    const l = (id: string): TokenLimit => ({ window: id, issue: id, tokensPerMinute: 10, counts: "call" });
    limits.counted(l("a"), 5);
    c.advance(61_000);
    limits.counted(l("b"), 5);
    limits.counted(l("c"), 5);
    expect([limits.used("a"), limits.used("b"), limits.used("c")]).toEqual([0, 5, 5]);
  });
});

describe("the counting registry", () => {
  const answer = (inputTokens: number, outputTokens: number) =>
    ({ text: "ok", usage: { inputTokens, outputTokens }, finishReason: "stop" }) as unknown as ModelResult;
  const registry = (models: Record<string, ResolvedModel["entry"]>): ProviderRegistry =>
    ({
      resolve: async (id: string) => ({
        id,
        entry: models[id],
        provider: {} as never,
        generate: async () => answer(70, 30),
      }),
    }) as unknown as ProviderRegistry;

  it("counts each call of a model with a limit as it answers, and hands back a model without one untouched", async () => {
    const limits = createTokenLimits({ now: clock().now });
    const models = countingRegistry(
      registry({ "stub/limited": entry("stub/limited", { tokensPerMinute: 1_000 }), "stub/free": entry("stub/free") }),
      limits,
    );
    const limited = await models.resolve("stub/limited");
    await limited.generate({ messages: [] });
    await limited.generate({ messages: [] });
    expect(limits.used("model:stub/limited")).toBe(200);
    const free = await models.resolve("stub/free");
    await free.generate({ messages: [] });
    expect(limits.used("model:stub/free")).toBe(0);
  });
});
