import { DomainError } from "@kiln/kit/errors";
import { createLocalEchoProvider } from "@kiln/models/local-echo";
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

async function issuesOf(
  input: Parameters<typeof checkedRoute>[0],
  registry: Parameters<typeof checkedRoute>[1] = models,
) {
  try {
    await checkedRoute(input, registry, "org_1");
  } catch (e) {
    if (e instanceof DomainError) return e.details.map((d) => d.field);
    throw e;
  }
  return [];
}

describe("model route rules", () => {
  it("accepts a route of runnable models, defaulting retryOn to every kind", async () => {
    expect(
      await checkedRoute(
        { name: "main-route", strategy: "fallback", targets: [{ model: "local/echo" }] },
        models,
        "org_1",
      ),
    ).toEqual({
      name: "main-route",
      strategy: "fallback",
      targets: [{ model: "local/echo" }],
      retryOn: ["429", "5xx", "529", "timeout", "connection"],
      attemptTimeoutMs: null,
    });
  });

  it("names every bad field", async () => {
    const echo = [{ model: "local/echo" }];
    expect(await issuesOf({ name: "-bad", strategy: "fallback", targets: echo })).toEqual(["name"]);
    expect(await issuesOf({ name: "Bad", strategy: "fallback", targets: echo })).toEqual(["name"]);
    expect(await issuesOf({ name: "ok", strategy: "random", targets: echo })).toEqual(["strategy"]);
    expect(await issuesOf({ name: "ok", strategy: "fallback", targets: [] })).toEqual(["targets"]);
    expect(
      await issuesOf({ name: "ok", strategy: "fallback", targets: Array(9).fill({ model: "local/echo" }) }),
    ).toEqual(["targets"]);
    // An unavailable model (no OpenAI key here), an unknown one, an empty one, a route, a repeat.
    expect(
      await issuesOf({
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
    expect(
      await issuesOf({ name: "ok", strategy: "weighted", targets: [{ model: "local/echo", weight: 1.5 }] }),
    ).toEqual(["targets[0].weight"]);
    expect(await issuesOf({ name: "ok", strategy: "weighted", targets: [{ model: "local/echo", weight: 0 }] })).toEqual(
      ["targets"],
    );
    expect(
      await issuesOf({ name: "ok", strategy: "fallback", targets: echo, retryOn: ["5xx", "5xx", "teapot"] }),
    ).toEqual(["retryOn[1]", "retryOn[2]"]);
    expect(await issuesOf({ name: "ok", strategy: "fallback", targets: echo, attemptTimeoutMs: 0 })).toEqual([
      "attemptTimeoutMs",
    ]);
  });

  it("leaves stored targets unchecked when they do not change", async () => {
    expect(await issuesOf({ name: "ok", strategy: "fallback", targets: [{ model: "openai/gpt-4o" }] }, null)).toEqual(
      [],
    );
  });

  it("accepts a target of the organization's provider connections, for that organization only", async () => {
    const acme = {
      id: "acme/m1",
      provider: "acme",
      model: "m1",
      available: true,
      connectionId: "pcn_1",
      capabilities: { tools: false, jsonSchema: false, input: ["text" as const] },
      pricing: { inputPerMTokUsd: null, outputPerMTokUsd: null },
    };
    const withConnections = createProviderRegistry(
      { openai: {}, compatible: [], defaultModel: "local/echo", timeoutMs: 1_000, maxRetries: 0 },
      {
        organizations: async (id) => ({
          models: id === "org_1" ? [acme] : [],
          providerOf: () => createLocalEchoProvider(),
        }),
      },
    );
    const route = { name: "ok", strategy: "fallback", targets: [{ model: "acme/m1" }] };
    expect((await checkedRoute(route, withConnections, "org_1")).targets).toEqual([{ model: "acme/m1" }]);
    await expect(checkedRoute(route, withConnections, "org_2")).rejects.toMatchObject({
      details: [{ field: "targets[0].model" }],
    });
  });
});
