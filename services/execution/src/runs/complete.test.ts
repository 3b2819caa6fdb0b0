import { create } from "@bufbuild/protobuf";
import type { IdentityAuth } from "@kiln/kit/authorizer";
import { DomainError, permissionDenied } from "@kiln/kit/errors";
import type { Principal } from "@kiln/kit/principal";
import { AuthorizeResponseSchema } from "@kiln/proto/identity";
import { describe, expect, it } from "vitest";
import { ProviderError } from "../providers/provider.js";
import { createProviderRegistry } from "../providers/provider-registry.js";
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
const input = { organizationId: "org_a", model: "", system: "grade it", user: "the output", responseSchemaJson: "" };

async function rejection(p: Promise<unknown>): Promise<DomainError> {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  if (!(e instanceof DomainError)) throw new Error(`expected a DomainError, got ${String(e)}`);
  return e;
}

describe("createCompleter", () => {
  const complete = createCompleter({ identityAuth, models: createProviderRegistry(config) });

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
    const c = await complete({ ...input, responseSchemaJson: JSON.stringify(schema) }, { principal: service });
    expect(c.json).toEqual({ score: expect.any(Number) });
  });

  it("refuses a caller without runs:write, an unknown model and a bad schema", async () => {
    const key: Principal = { type: "api_key", id: "key_x", organizationId: "org_a", scopes: ["evaluations:write"] };
    expect((await rejection(complete(input, { principal: key }))).kind).toBe("permission_denied");
    expect((await rejection(complete({ ...input, model: "nope/x" }, { principal: service }))).kind).toBe(
      "invalid_argument",
    );
    const bad = await rejection(complete({ ...input, responseSchemaJson: "[1" }, { principal: service }));
    expect(bad.details).toEqual([{ field: "responseSchema", issue: "is not valid JSON" }]);
  });

  it("passes provider failures on as provider_error / provider_timeout", async () => {
    const failing = createCompleter({
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
  });
});
