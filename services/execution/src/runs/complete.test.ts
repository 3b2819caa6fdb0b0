import { create } from "@bufbuild/protobuf";
import type { IdentityAuth } from "@kiln/kit/authorizer";
import { createMemoryBus } from "@kiln/kit/bus/memory";
import { DomainError, permissionDenied } from "@kiln/kit/errors";
import { jsonText, jsonTextOf } from "@kiln/kit/json-text";
import { createLogger } from "@kiln/kit/logger";
import type { Principal } from "@kiln/kit/principal";
import { createMemoryStore } from "@kiln/kit/store/memory";
import { createBreakerBoard } from "@kiln/models/circuit-breaker";
import { ProviderError } from "@kiln/models/provider";
import { createProviderRegistry } from "@kiln/models/registry";
import { AuthorizeResponseSchema } from "@kiln/proto/identity";
import { describe, expect, it } from "vitest";
import { createRunEventOutbox, RUNS_STREAM, runEventIntentCollection } from "../events/run-events.js";
import { createRouteCache } from "../model-routes/route-cache.js";
import { modelRouteCollection } from "../model-routes/route-store.js";
import { runCollection } from "../store/run-store.js";
import { createCompleter } from "./complete.js";

const identityAuth: IdentityAuth = {
  async verifyApiKey() {
    throw new Error("unused");
  },
  async authorize(principal, input) {
    if (principal.type === "api_key" && !principal.scopes.includes(input.scope ?? ""))
      throw permissionDenied(`lacks the scope ${input.scope}`);
    return create(AuthorizeResponseSchema, {});
  },
};
const service: Principal = { type: "service", id: "evaluation" };
const config = { openai: {}, compatible: [], defaultModel: "local/echo", timeoutMs: 1_000, maxRetries: 0 };
const input = { organizationId: "org_a", model: "", system: "grade it", user: "the output" };

async function rejection(p: Promise<unknown>): Promise<DomainError> {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  if (!(e instanceof DomainError)) throw new Error(`expected a DomainError, got ${String(e)}`);
  return e;
}

/** Where the judge runs are stored, and the events they publish. */
function storage() {
  const store = createMemoryStore();
  const runs = runCollection(store);
  const bus = createMemoryBus();
  void bus.ensureStream(RUNS_STREAM);
  const logger = createLogger({ name: "test", level: "silent" });
  return {
    runs,
    outbox: createRunEventOutbox(runs, runEventIntentCollection(store), bus, logger, { relayAfterMs: 0 }),
  };
}

describe("createCompleter", () => {
  const stored = storage();
  const complete = createCompleter({ identityAuth, models: createProviderRegistry(config), ...stored });

  it("stores each call as a judge run with its tokens and cost", async () => {
    const c = await complete(input, { principal: service });
    expect(c.runId).toMatch(/^jrun_/);
    const run = await stored.runs.findOne({ _id: c.runId });
    expect(run).toMatchObject({
      kind: "judge",
      organizationId: "org_a",
      status: "succeeded",
      inputJson: JSON.stringify({ system: "grade it", user: "the output" }),
      usage: { inputTokens: 4, outputTokens: 4 },
      estimatedCostUsd: 0,
      model: "local/echo",
    });
  });

  it("makes one call to the default model with the system and user messages", async () => {
    const c = await complete(input, { principal: service });
    expect(c).toMatchObject({
      text: "grade it\n\nthe output",
      provider: "local",
      model: "local/echo",
      estimatedCostUsd: 0,
    });
    expect(c.usage).toEqual({ inputTokens: 4, outputTokens: 4 });
    expect(c.json).toBeUndefined();
  });

  it("answers JSON for a response schema", async () => {
    const schema = { type: "object", properties: { score: { type: "number" } }, required: ["score"] };
    const c = await complete({ ...input, responseSchema: jsonText(schema) }, { principal: service });
    expect(c.json).toEqual({ score: expect.any(Number) });
  });

  it("refuses a caller without runs:write, an unknown model and a bad schema", async () => {
    const key: Principal = { type: "api_key", id: "key_x", organizationId: "org_a", scopes: ["evaluations:write"] };
    expect((await rejection(complete(input, { principal: key }))).kind).toBe("permission_denied");
    expect((await rejection(complete({ ...input, model: "nope/x" }, { principal: service }))).kind).toBe(
      "invalid_argument",
    );
    const bad = await rejection(complete({ ...input, responseSchema: jsonTextOf("[1") }, { principal: service }));
    expect(bad.details).toEqual([{ field: "responseSchema", issue: "is not valid JSON" }]);
  });

  it("passes provider failures on as provider_error / provider_timeout", async () => {
    const failedStore = storage();
    const failing = createCompleter({
      ...failedStore,
      identityAuth,
      models: createProviderRegistry(config, {
        providers: [
          {
            id: "local",
            async generate() {
              throw new ProviderError("provider_timeout", "too slow", { provider: "local", model: "echo" });
            },
          },
        ],
      }),
    });
    expect((await rejection(failing(input, { principal: service }))).kind).toBe("provider_timeout");
    // The failed call is on record as a failed judge run.
    const [failed] = await failedStore.runs.find({ kind: "judge" });
    expect(failed).toMatchObject({ status: "failed", error: { code: "provider_timeout", message: "too slow" } });
  });

  it("runs a judge whose model is one of the organization's routes, and refuses another organization's", async () => {
    const store = createMemoryStore();
    const routes = modelRouteCollection(store);
    const at = new Date();
    await routes.insertOne({
      _id: "mrt_1",
      organizationId: "org_a",
      name: "judges",
      strategy: "fallback",
      targets: [{ model: "local/echo" }],
      retryOn: [],
      attemptTimeoutMs: null,
      createdAt: at,
      updatedAt: at,
    });
    const routed = createCompleter({
      identityAuth,
      models: createProviderRegistry(config),
      routes: { cache: createRouteCache(routes), breakers: createBreakerBoard({}) },
      ...stored,
    });
    const c = await routed({ ...input, model: "route/judges" }, { principal: service });
    // Recorded as the target that answered, at its price, with the route's attempts.
    expect(c).toMatchObject({ provider: "local", model: "local/echo", estimatedCostUsd: 0 });
    const run = await stored.runs.findOne({ _id: c.runId });
    expect(run).toMatchObject({ status: "succeeded", provider: "local", model: "local/echo", estimatedCostUsd: 0 });
    expect(run?.route).toBe("judges");
    expect(run?.attempts?.map((a) => [a.model, a.status])).toEqual([["local/echo", "succeeded"]]);
    const other = await rejection(
      routed({ ...input, organizationId: "org_b", model: "route/judges" }, { principal: service }),
    );
    expect(other.kind).toBe("invalid_argument");
  });
});
