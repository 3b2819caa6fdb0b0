import { describe, expect, it } from "vitest";
import type { ModelEntry } from "../model-catalog.js";
import { type ModelDelta, type ModelRequest, type ModelResult, ProviderError } from "../provider.js";
import type { ResolvedModel } from "../provider-registry.js";
import { createBreakerBoard } from "./circuit-breaker.js";
import { createRoutedModel, type RouteDefinition, RouteFailure, routedAnswerOf } from "./model-route.js";
import { retryKindOf, seededRandom, targetOrder } from "./route-policy.js";

type Behaviour = (req: Omit<ModelRequest, "model">) => Promise<ModelResult>;

/** A fake target: its behaviour per call, and the requests it saw. */
function fakeTarget(id: string, behaviour: Behaviour, capabilities = { tools: true, jsonSchema: true }) {
  const [provider, model] = id.split("/") as [string, string];
  const entry: ModelEntry & { available: boolean } = {
    id,
    provider,
    model,
    capabilities: { ...capabilities, input: ["text"] },
    pricing: { inputPerMTokUsd: 1, outputPerMTokUsd: 2 },
    available: true,
  };
  const calls: Omit<ModelRequest, "model">[] = [];
  const generate = (req: Omit<ModelRequest, "model">) => {
    calls.push(req);
    return behaviour(req);
  };
  const resolved: ResolvedModel = {
    id,
    entry,
    provider: { id: provider, generate: (r) => generate(r) },
    generate,
  };
  return { resolved, calls };
}

const answer = (text: string, provider = "p", model = "m"): ModelResult => ({
  text,
  toolCalls: [],
  usage: { inputTokens: 1, outputTokens: 1 },
  finishReason: "stop",
  provider,
  model,
  retries: 0,
});
const ok =
  (text: string): Behaviour =>
  async () =>
    answer(text);
const failWith =
  (status: number | undefined, kind: "provider_error" | "provider_timeout" = "provider_error"): Behaviour =>
  async () => {
    throw new ProviderError(kind, `failed with ${status ?? kind}`, { provider: "p", model: "m", status });
  };

function setup(route: RouteDefinition, targets: ReturnType<typeof fakeTarget>[], breaker = createBreakerBoard()) {
  const byId = new Map(targets.map((t) => [t.resolved.id, t.resolved]));
  return createRoutedModel(route, {
    resolve: (id) => {
      const m = byId.get(id);
      if (!m) throw new Error(`unknown model ${id}`);
      return m;
    },
    breakers: breaker,
    random: seededRandom(42),
  });
}

const messages = [{ role: "user" as const, content: "hi" }];

describe("fallback routes", () => {
  it("answers from the first target that succeeds, recording each attempt in order", async () => {
    const a = fakeTarget("a/one", failWith(500));
    const b = fakeTarget("b/two", failWith(429));
    const c = fakeTarget("c/three", ok("from c"));
    const model = setup(
      { name: "r", strategy: "fallback", targets: [{ model: "a/one" }, { model: "b/two" }, { model: "c/three" }] },
      [a, b, c],
    );
    const r = await model.generate({ messages });
    expect(r.text).toBe("from c");
    const routed = routedAnswerOf(r);
    expect(routed?.answered.id).toBe("c/three");
    expect(routed?.attempts.map((x) => [x.model, x.status, x.error?.code])).toEqual([
      ["a/one", "failed", "provider_error"],
      ["b/two", "failed", "provider_error"],
      ["c/three", "succeeded", undefined],
    ]);
    expect(model.id).toBe("route/r");
    // Every attempt but the last target's goes without provider retries.
    expect(a.calls[0]?.maxRetries).toBe(0);
    expect(b.calls[0]?.maxRetries).toBe(0);
    expect(c.calls[0]?.maxRetries).toBeUndefined();
  });

  it("fails at once on a non-retryable failure (400, 401), without trying the next target", async () => {
    for (const status of [400, 401, 403, 422]) {
      const a = fakeTarget("a/one", failWith(status));
      const b = fakeTarget("b/two", ok("never"));
      const model = setup({ name: "r", strategy: "fallback", targets: [{ model: "a/one" }, { model: "b/two" }] }, [
        a,
        b,
      ]);
      const e = await model.generate({ messages }).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(RouteFailure);
      expect((e as RouteFailure).status).toBe(status);
      expect((e as RouteFailure).attempts).toHaveLength(1);
      expect((e as RouteFailure).last.id).toBe("a/one");
      expect(b.calls).toHaveLength(0);
    }
  });

  it("moves on only after the kinds retryOn names", async () => {
    const a = fakeTarget("a/one", failWith(429));
    const b = fakeTarget("b/two", ok("b"));
    const only5xx = setup(
      { name: "r", strategy: "fallback", targets: [{ model: "a/one" }, { model: "b/two" }], retryOn: ["5xx"] },
      [a, b],
    );
    await expect(only5xx.generate({ messages })).rejects.toThrow("failed with 429");
    expect(b.calls).toHaveLength(0);
    const with429 = setup(
      { name: "r", strategy: "fallback", targets: [{ model: "a/one" }, { model: "b/two" }], retryOn: ["429"] },
      [a, b],
    );
    expect((await with429.generate({ messages })).text).toBe("b");
  });

  it("classifies failures into the retryOn kinds", () => {
    const e = (status: number | undefined, kind: "provider_error" | "provider_timeout" = "provider_error") =>
      new ProviderError(kind, "x", { provider: "p", model: "m", status });
    expect(retryKindOf(e(429))).toBe("429");
    expect(retryKindOf(e(529))).toBe("529");
    expect(retryKindOf(e(500))).toBe("5xx");
    expect(retryKindOf(e(503))).toBe("5xx");
    expect(retryKindOf(e(undefined))).toBe("connection");
    expect(retryKindOf(e(undefined, "provider_timeout"))).toBe("timeout");
    expect(retryKindOf(e(400))).toBeUndefined();
    expect(retryKindOf(e(401))).toBeUndefined();
  });

  it("fails with the last failure and every attempt when all targets fail", async () => {
    const a = fakeTarget("a/one", failWith(500));
    const b = fakeTarget("b/two", failWith(503));
    const model = setup({ name: "r", strategy: "fallback", targets: [{ model: "a/one" }, { model: "b/two" }] }, [a, b]);
    const e = (await model.generate({ messages }).catch((x: unknown) => x)) as RouteFailure;
    expect(e.status).toBe(503);
    expect(e.last.id).toBe("b/two");
    expect(e.attempts.map((x) => x.status)).toEqual(["failed", "failed"]);
  });

  it("bounds each attempt by attemptTimeoutMs, then moves on", async () => {
    const hang: Behaviour = (req) =>
      new Promise((_, reject) => req.signal?.addEventListener("abort", () => reject(req.signal?.reason)));
    const a = fakeTarget("a/one", hang);
    const b = fakeTarget("b/two", ok("b"));
    const model = setup(
      { name: "r", strategy: "fallback", targets: [{ model: "a/one" }, { model: "b/two" }], attemptTimeoutMs: 50 },
      [a, b],
    );
    const started = Date.now();
    const r = await model.generate({ messages, timeoutMs: 10_000 });
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(r.text).toBe("b");
    expect(a.calls[0]?.timeoutMs).toBe(50);
    const attempts = routedAnswerOf(r)?.attempts ?? [];
    expect(attempts[0]).toMatchObject({ model: "a/one", status: "failed", error: { code: "provider_timeout" } });
    expect(attempts[0]?.latencyMs).toBeGreaterThanOrEqual(40);
  });

  it("does not fall back from the caller's own cancel", async () => {
    const controller = new AbortController();
    const a = fakeTarget("a/one", (req) => {
      controller.abort(new Error("client gone"));
      return Promise.reject(req.signal?.reason);
    });
    const b = fakeTarget("b/two", ok("b"));
    const model = setup({ name: "r", strategy: "fallback", targets: [{ model: "a/one" }, { model: "b/two" }] }, [a, b]);
    await expect(model.generate({ messages, signal: controller.signal })).rejects.toThrow("client gone");
    expect(b.calls).toHaveLength(0);
  });

  it("records a target that cannot be resolved any more as a failed attempt and moves on", async () => {
    const b = fakeTarget("b/two", ok("b"));
    const model = setup({ name: "r", strategy: "fallback", targets: [{ model: "gone/model" }, { model: "b/two" }] }, [
      b,
    ]);
    const r = await model.generate({ messages });
    expect(routedAnswerOf(r)?.attempts[0]).toMatchObject({
      model: "gone/model",
      status: "failed",
      error: { code: "model_unavailable" },
    });
  });

  it("offers only what every target can do", () => {
    const a = fakeTarget("a/one", ok("a"), { tools: true, jsonSchema: false });
    const b = fakeTarget("b/two", ok("b"));
    const model = setup({ name: "r", strategy: "fallback", targets: [{ model: "a/one" }, { model: "b/two" }] }, [a, b]);
    expect(model.entry.capabilities).toEqual({ tools: true, jsonSchema: false, input: ["text"] });
  });
});

describe("streaming through a route", () => {
  const streamThenFail =
    (pieces: string[], status: number): Behaviour =>
    async (req) => {
      for (const text of pieces) req.onDelta?.({ type: "text", text });
      throw new ProviderError("provider_error", `broke with ${status}`, { provider: "p", model: "m", status });
    };

  it("falls back before the first byte", async () => {
    const a = fakeTarget("a/one", streamThenFail([], 500));
    const b = fakeTarget("b/two", async (req) => {
      req.onDelta?.({ type: "text", text: "from b" });
      return answer("from b");
    });
    const model = setup({ name: "r", strategy: "fallback", targets: [{ model: "a/one" }, { model: "b/two" }] }, [a, b]);
    const deltas: ModelDelta[] = [];
    const r = await model.generate({ messages, onDelta: (d) => deltas.push(d) });
    expect(r.text).toBe("from b");
    expect(deltas).toEqual([{ type: "text", text: "from b" }]);
  });

  it("fails the call once a piece went to the client", async () => {
    const a = fakeTarget("a/one", streamThenFail(["half an ans"], 500));
    const b = fakeTarget("b/two", ok("never"));
    const model = setup({ name: "r", strategy: "fallback", targets: [{ model: "a/one" }, { model: "b/two" }] }, [a, b]);
    const deltas: ModelDelta[] = [];
    const e = (await model
      .generate({ messages, onDelta: (d) => deltas.push(d) })
      .catch((x: unknown) => x)) as RouteFailure;
    expect(e).toBeInstanceOf(RouteFailure);
    expect(e.attempts).toHaveLength(1);
    expect(deltas).toHaveLength(1);
    expect(b.calls).toHaveLength(0);
  });
});

describe("weighted routes", () => {
  it("spreads 1000 picks by weight within tolerance", async () => {
    const a = fakeTarget("a/one", ok("a"));
    const b = fakeTarget("b/two", ok("b"));
    const c = fakeTarget("c/three", ok("c"));
    const model = setup(
      {
        name: "w",
        strategy: "weighted",
        targets: [
          { model: "a/one", weight: 70 },
          { model: "b/two", weight: 20 },
          { model: "c/three", weight: 10 },
        ],
      },
      [a, b, c],
    );
    const counts: Record<string, number> = { a: 0, b: 0, c: 0 };
    for (let i = 0; i < 1000; i++) {
      const r = await model.generate({ messages });
      counts[r.text] = (counts[r.text] ?? 0) + 1;
    }
    expect(Math.abs((counts.a ?? 0) - 700)).toBeLessThan(50);
    expect(Math.abs((counts.b ?? 0) - 200)).toBeLessThan(40);
    expect(Math.abs((counts.c ?? 0) - 100)).toBeLessThan(30);
  });

  it("is reproducible with a seed, puts zero weights last and falls back to the other targets", async () => {
    const targets = [
      { model: "a", weight: 1 },
      { model: "b", weight: 0 },
      { model: "c", weight: 3 },
    ];
    const one = targetOrder("weighted", targets, seededRandom(7));
    expect(targetOrder("weighted", targets, seededRandom(7))).toEqual(one);
    expect(one.at(-1)).toBe(1);
    expect([...one].sort()).toEqual([0, 1, 2]);
    const a = fakeTarget("a/one", failWith(503));
    const b = fakeTarget("b/two", ok("b"));
    const model = setup(
      {
        name: "w",
        strategy: "weighted",
        targets: [
          { model: "a/one", weight: 1 },
          { model: "b/two", weight: 0 },
        ],
      },
      [a, b],
    );
    expect((await model.generate({ messages })).text).toBe("b");
  });
});

describe("circuit breaker", () => {
  it("skips a target after its threshold, probes it after openMs and closes on success", async () => {
    let clock = 0;
    const breaker = createBreakerBoard({ failureThreshold: 3, openMs: 1000, now: () => clock });
    let aFails = true;
    const a = fakeTarget("a/one", async () => {
      if (aFails) throw new ProviderError("provider_error", "down", { provider: "a", model: "one", status: 500 });
      return answer("a");
    });
    const b = fakeTarget("b/two", ok("b"));
    const model = setup(
      { name: "r", strategy: "fallback", targets: [{ model: "a/one" }, { model: "b/two" }] },
      [a, b],
      breaker,
    );
    for (let i = 0; i < 3; i++) await model.generate({ messages });
    expect(a.calls).toHaveLength(3);
    expect(breaker.state("a/one")).toBe("open");
    const skipped = await model.generate({ messages });
    expect(a.calls).toHaveLength(3);
    expect(routedAnswerOf(skipped)?.attempts.map((x) => x.status)).toEqual(["skipped", "succeeded"]);
    clock = 1000;
    expect(breaker.state("a/one")).toBe("half_open");
    // A failed probe opens it again.
    await model.generate({ messages });
    expect(a.calls).toHaveLength(4);
    expect(breaker.state("a/one")).toBe("open");
    clock = 2000;
    aFails = false;
    const probed = await model.generate({ messages });
    expect(probed.text).toBe("a");
    expect(breaker.state("a/one")).toBe("closed");
  });

  it("lets one probe through at a time while half-open", () => {
    let clock = 0;
    const breaker = createBreakerBoard({ failureThreshold: 1, openMs: 10, now: () => clock });
    breaker.failed("k");
    expect(breaker.admit("k")).toBe("skip");
    clock = 10;
    expect(breaker.admit("k")).toBe("probe");
    expect(breaker.admit("k")).toBe("skip");
    breaker.released("k");
    expect(breaker.admit("k")).toBe("probe");
    breaker.succeeded("k");
    expect(breaker.admit("k")).toBe("call");
  });

  it("does not count non-retryable failures, and fails when every target is skipped", async () => {
    const breaker = createBreakerBoard({ failureThreshold: 1, openMs: 60_000 });
    const a = fakeTarget("a/one", failWith(400));
    const model = setup({ name: "r", strategy: "fallback", targets: [{ model: "a/one" }] }, [a], breaker);
    await expect(model.generate({ messages })).rejects.toThrow("failed with 400");
    expect(breaker.state("a/one")).toBe("closed");
    breaker.failed("a/one");
    const e = (await model.generate({ messages }).catch((x: unknown) => x)) as RouteFailure;
    expect(e.message).toContain("skipped by its circuit breaker");
    expect(e.attempts).toEqual([{ model: "a/one", status: "skipped", latencyMs: 0 }]);
  });
});

describe("targets the caller holds back", () => {
  const spent = (target: ResolvedModel) =>
    new ProviderError("provider_error", `${target.id} has spent its tokens for this minute`, {
      provider: target.entry.provider,
      model: target.entry.model,
      status: 429,
      retryAfterMs: 7_000,
    });

  it("skips a held-back target without calling it, whatever retryOn says, and answers from the next", async () => {
    const a = fakeTarget("a/one", ok("from a"));
    const b = fakeTarget("b/two", ok("from b"));
    const model = createRoutedModel(
      { name: "r", strategy: "fallback", targets: [{ model: "a/one" }, { model: "b/two" }], retryOn: ["5xx"] },
      {
        resolve: (id) => (id === "a/one" ? a.resolved : b.resolved),
        breakers: createBreakerBoard(),
        holdBack: (t) => (t.id === "a/one" ? spent(t) : undefined),
      },
    );
    const r = await model.generate({ messages });
    expect(r.text).toBe("from b");
    expect(a.calls).toHaveLength(0);
    expect(routedAnswerOf(r)?.attempts).toEqual([
      {
        model: "a/one",
        status: "skipped",
        latencyMs: 0,
        error: { code: "provider_error", message: "a/one has spent its tokens for this minute" },
      },
      { model: "b/two", status: "succeeded", latencyMs: expect.any(Number) },
    ]);
    expect(model.targets.map((t) => t.id)).toEqual(["a/one", "b/two"]);
  });

  it("fails with the hold-back's 429 and wait when every target is held back, calling none", async () => {
    const a = fakeTarget("a/one", ok("from a"));
    const b = fakeTarget("b/two", ok("from b"));
    const model = createRoutedModel(
      { name: "r", strategy: "fallback", targets: [{ model: "a/one" }, { model: "b/two" }] },
      { resolve: (id) => (id === "a/one" ? a.resolved : b.resolved), breakers: createBreakerBoard(), holdBack: spent },
    );
    const e = (await model.generate({ messages }).catch((x: unknown) => x)) as RouteFailure;
    expect(e).toBeInstanceOf(RouteFailure);
    expect(e.status).toBe(429);
    expect(e.retryAfterMs).toBe(7_000);
    expect(e.message).toBe("a/one has spent its tokens for this minute");
    expect(e.attempts.map((x) => x.status)).toEqual(["skipped", "skipped"]);
    expect(a.calls.length + b.calls.length).toBe(0);
  });
});
