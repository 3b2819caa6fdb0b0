import { fastify } from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import { lazyValidators } from "./lazy-validators.js";
import { buildUnwiredGateway } from "./openapi-document.js";

const apps: { close(): Promise<unknown> }[] = [];
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
});

function appWith(validators = lazyValidators(), coerceTypes: boolean | "array" = false) {
  const app = fastify({
    ajv: { customOptions: { allErrors: true, coerceTypes } },
    schemaController: { compilersFactory: { buildValidator: validators.buildValidator } },
  });
  apps.push(app);
  return app;
}

describe("lazyValidators", () => {
  it("validates bodies, query strings and params as Fastify's own compiler does", async () => {
    const app = appWith();
    app.post(
      "/things/:id",
      {
        schema: {
          params: { type: "object", properties: { id: { type: "string", pattern: "^t_" } } },
          querystring: { type: "object", properties: { dry: { type: "string", enum: ["yes"] } } },
          body: {
            type: "object",
            required: ["name", "count"],
            properties: { name: { type: "string", minLength: 1 }, count: { type: "integer" } },
          },
        },
      },
      async (request) => ({ got: request.body }),
    );
    const ok = await app.inject({ method: "POST", url: "/things/t_1?dry=yes", payload: { name: "a", count: 2 } });
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toEqual({ got: { name: "a", count: 2 } });

    const bad = await app.inject({ method: "POST", url: "/things/t_1", payload: { name: "", count: "2" } });
    expect(bad.statusCode).toBe(400);
    // allErrors: both fields named, so the errors come from the compiled function of this call.
    expect(bad.json().message).toContain("body/name");
    expect(bad.json().message).toContain("body/count");
    expect((await app.inject({ method: "POST", url: "/things/x", payload: { name: "a", count: 1 } })).statusCode).toBe(
      400,
    );
    expect(
      (await app.inject({ method: "POST", url: "/things/t_1?dry=no", payload: { name: "a", count: 1 } })).statusCode,
    ).toBe(400);
    // The same route again: the compiled function is reused and still reports this call's errors.
    const again = await app.inject({ method: "POST", url: "/things/t_1", payload: { name: "a" } });
    expect(again.statusCode).toBe(400);
    expect(again.json().message).toContain("count");
    expect(again.json().message).not.toContain("body/name");
  });

  it("hands Ajv the parent data, so that a schema may replace the whole body", async () => {
    // Coercing the root value to an array replaces request.body: Ajv can only do that through
    // the parent Fastify passes when the function carries Ajv's `schemaEnv`.
    const app = appWith(lazyValidators(), "array");
    app.post("/tags", { schema: { body: { type: "array", items: { type: "string" } } } }, async (request) => ({
      got: request.body,
    }));
    // The first request compiles the schema, the second finds it compiled: both hand the parent on.
    for (const tag of ["a", "b"]) {
      const answer = await app.inject({
        method: "POST",
        url: "/tags",
        payload: JSON.stringify(tag),
        headers: { "content-type": "application/json" },
      });
      expect(answer.json()).toEqual({ got: [tag] });
    }
  });

  it("matches header schemas that name headers in any case", async () => {
    const app = appWith();
    app.post(
      "/h",
      {
        schema: {
          headers: {
            type: "object",
            required: ["Idempotency-Key"],
            properties: { "Idempotency-Key": { type: "string", minLength: 3 } },
          },
        },
      },
      async () => ({ ok: true }),
    );
    expect((await app.inject({ method: "POST", url: "/h", headers: { "IDEMPOTENCY-KEY": "abc" } })).statusCode).toBe(
      200,
    );
    expect((await app.inject({ method: "POST", url: "/h", headers: { "idempotency-key": "ab" } })).statusCode).toBe(
      400,
    );
    expect((await app.inject({ method: "POST", url: "/h" })).statusCode).toBe(400);
  });

  it("compiles nothing while the server gets ready; compileAll finds a broken schema", async () => {
    const validators = lazyValidators();
    const app = appWith(validators);
    app.post("/broken", { schema: { body: { type: "no-such-type" } } }, async () => ({ ok: true }));
    app.post("/fine", { schema: { body: { type: "object" } } }, async () => ({ ok: true }));
    // Fastify's own compiler would refuse to get ready here (FST_ERR_SCH_VALIDATION_BUILD).
    await app.ready();
    expect((await app.inject({ method: "POST", url: "/fine", payload: {} })).statusCode).toBe(200);
    expect((await app.inject({ method: "POST", url: "/broken", payload: {} })).statusCode).toBe(500);
    expect(() => validators.compileAll()).toThrow(/no-such-type|type/);
  });
});

describe("the gateway's route schemas", () => {
  it("all compile", async () => {
    const gateway = await buildUnwiredGateway("schemas");
    apps.push(gateway.app);
    await gateway.app.ready();
    // 182 on 2026-11-26: body, params, query and header schemas of every route.
    expect(gateway.compileRouteSchemas()).toBeGreaterThan(150);
  });
});
