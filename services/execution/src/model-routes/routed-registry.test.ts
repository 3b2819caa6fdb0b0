import { createBreakerBoard } from "@kiln/models/circuit-breaker";
import { createLocalEchoProvider } from "@kiln/models/local-echo";
import { createProviderRegistry, type OrganizationModels } from "@kiln/models/registry";
import { routedAnswerOf } from "@kiln/models/routes";
import { describe, expect, it } from "vitest";
import type { RouteCache } from "./route-cache.js";
import type { ModelRouteDoc } from "./route-store.js";
import { routedRegistry } from "./routed-registry.js";

/** org_a has a provider connection "acme" with one model, acme/echo (the echo model behind it); org_b has none. */
const connections: Record<string, OrganizationModels> = {
  org_a: {
    models: [
      {
        id: "acme/echo",
        provider: "acme",
        model: "echo",
        available: true,
        connectionId: "pcn_1",
        capabilities: { tools: true, jsonSchema: true, input: ["text"] },
        pricing: { inputPerMTokUsd: 0, outputPerMTokUsd: 0 },
      },
    ],
    providerOf: () => createLocalEchoProvider(),
  },
};

const models = createProviderRegistry(
  { openai: {}, compatible: [], defaultModel: "local/echo", timeoutMs: 1_000, maxRetries: 0 },
  { organizations: async (id) => connections[id] ?? { models: [], providerOf: () => createLocalEchoProvider() } },
);

/** The cache answers each organization's route "r" from `targets` (the cache's own reads are route-cache.test.ts's). */
function cacheOf(targets: string[]): RouteCache {
  const doc = (organizationId: string): ModelRouteDoc => ({
    _id: `mrt_${organizationId}`,
    organizationId,
    name: "r",
    strategy: "fallback",
    targets: targets.map((model) => ({ model })),
    retryOn: ["429", "5xx", "529", "timeout", "connection"],
    attemptTimeoutMs: null,
    createdAt: new Date(0),
    updatedAt: new Date(0),
  });
  return { get: async (organizationId, name) => (name === "r" ? doc(organizationId) : null), invalidate: () => {} };
}

const messages = [{ role: "user" as const, content: "hi" }];

describe("routedRegistry: routes over the organization-aware registry", () => {
  it("resolves a route's targets with the run's organization: its connection models are targets", async () => {
    const routes = { cache: cacheOf(["openai/gpt-4o", "acme/echo"]), breakers: createBreakerBoard() };
    const seen = await routedRegistry(models, routes, "org_a", ["route/r"]);
    const routed = await seen.resolve("route/r", { organizationId: "org_a" });
    expect(routed.id).toBe("route/r");
    const result = await routed.generate({ messages });
    const answer = routedAnswerOf(result);
    expect(answer?.answered.id).toBe("acme/echo");
    expect(answer?.attempts.map((a) => [a.model, a.status, a.error?.code])).toEqual([
      ["openai/gpt-4o", "failed", "model_unavailable"],
      ["acme/echo", "succeeded", undefined],
    ]);
  });

  it("does not let another organization's route reach a connection that is not its own", async () => {
    const routes = { cache: cacheOf(["acme/echo"]), breakers: createBreakerBoard() };
    const seen = await routedRegistry(models, routes, "org_b", ["route/r"]);
    await expect(seen.resolve("route/r", { organizationId: "org_b" })).rejects.toThrow(/unknown model "acme\/echo"/);
  });

  it("leaves every other model to the registry, with the caller's scope", async () => {
    const routes = { cache: cacheOf(["local/echo"]), breakers: createBreakerBoard() };
    const seen = await routedRegistry(models, routes, "org_a", ["route/r"]);
    expect((await seen.resolve("acme/echo", { organizationId: "org_a" })).entry.connectionId).toBe("pcn_1");
    await expect(seen.resolve("acme/echo")).rejects.toThrow(/unknown model/);
    await expect(seen.resolve("route/other", { organizationId: "org_a" })).rejects.toThrow(/no such route/);
  });
});
