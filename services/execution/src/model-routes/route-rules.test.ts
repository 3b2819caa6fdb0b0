import { DomainError } from "@kiln/kit/errors";
import { createProviderRegistry } from "@kiln/models/registry";
import { describe, expect, it } from "vitest";
import { checkedRoute } from "./route-rules.js";

const models = createProviderRegistry({
  openai: {},
  compatible: [],
  defaultModel: "local/echo",
  timeoutMs: 1_000,
  maxRetries: 0,
});

function issuesOf(input: Parameters<typeof checkedRoute>[0], registry: Parameters<typeof checkedRoute>[1] = models) {
  try {
    checkedRoute(input, registry);
  } catch (e) {
    if (e instanceof DomainError) return e.details.map((d) => d.field);
    throw e;
  }
  return [];
}

describe("model route rules", () => {
  it("accepts a route of runnable models, defaulting retryOn to every kind", () => {
    expect(
      checkedRoute({ name: "main-route", strategy: "fallback", targets: [{ model: "local/echo" }] }, models),
    ).toEqual({
      name: "main-route",
      strategy: "fallback",
      targets: [{ model: "local/echo" }],
      retryOn: ["429", "5xx", "529", "timeout", "connection"],
      attemptTimeoutMs: null,
    });
  });

  it("names every bad field", () => {
    const echo = [{ model: "local/echo" }];
    expect(issuesOf({ name: "-bad", strategy: "fallback", targets: echo })).toEqual(["name"]);
    expect(issuesOf({ name: "Bad", strategy: "fallback", targets: echo })).toEqual(["name"]);
    expect(issuesOf({ name: "ok", strategy: "random", targets: echo })).toEqual(["strategy"]);
    expect(issuesOf({ name: "ok", strategy: "fallback", targets: [] })).toEqual(["targets"]);
    expect(issuesOf({ name: "ok", strategy: "fallback", targets: Array(9).fill({ model: "local/echo" }) })).toEqual([
      "targets",
    ]);
    // An unavailable model (no OpenAI key here), an unknown one, an empty one, a route, a repeat.
    expect(
      issuesOf({
        name: "ok",
        strategy: "fallback",
        targets: [
          { model: "openai/gpt-4o" },
          { model: "x/y" },
          { model: "" },
          { model: "route/other" },
          { model: "local/echo" },
          { model: "local/echo" },
        ],
      }),
    ).toEqual(["targets[0].model", "targets[1].model", "targets[2].model", "targets[3].model", "targets[5].model"]);
    expect(issuesOf({ name: "ok", strategy: "weighted", targets: [{ model: "local/echo", weight: 1.5 }] })).toEqual([
      "targets[0].weight",
    ]);
    expect(issuesOf({ name: "ok", strategy: "weighted", targets: [{ model: "local/echo", weight: 0 }] })).toEqual([
      "targets",
    ]);
    expect(issuesOf({ name: "ok", strategy: "fallback", targets: echo, retryOn: ["5xx", "5xx", "teapot"] })).toEqual([
      "retryOn[1]",
      "retryOn[2]",
    ]);
    expect(issuesOf({ name: "ok", strategy: "fallback", targets: echo, attemptTimeoutMs: 0 })).toEqual([
      "attemptTimeoutMs",
    ]);
  });

  it("leaves stored targets unchecked when they do not change", () => {
    expect(issuesOf({ name: "ok", strategy: "fallback", targets: [{ model: "openai/gpt-4o" }] }, null)).toEqual([]);
  });
});
