import { describe, expect, it } from "vitest";
import { createConformanceChecker, type OpenApiDocument } from "./support/openapi-conformance.js";

/** The checker that test/sdk.test.ts runs every live answer through, on a document of its own. */
const doc: OpenApiDocument = {
  paths: {
    "/api/things/{id}": {
      get: {
        "x-api-stability": "beta",
        responses: {
          200: { content: { "application/json": { schema: { $ref: "#/components/schemas/Thing" } } } },
          404: { content: { "application/json": { schema: { type: "object" } } } },
        },
      },
    },
    "/api/things/special": {
      get: {
        "x-api-stability": "stable",
        responses: { 200: { content: { "application/json": { schema: { type: "array" } } } } },
      },
    },
  },
  components: {
    schemas: {
      Thing: {
        type: "object",
        required: ["id", "data"],
        properties: { id: { type: "string" }, data: { description: "free-form JSON" }, at: { format: "date-time" } },
      },
    },
  },
};

const answer = (status: number, stability = "beta", requestId = "req_1") => ({
  status,
  headers: new Headers({ "x-api-stability": stability, "x-request-id": requestId }),
});
const url = (path: string) => `http://127.0.0.1${path}`;

describe("createConformanceChecker", () => {
  it("accepts an answer that matches its operation's schema, free-form JSON included", () => {
    const checker = createConformanceChecker(doc);
    const body = { id: "t1", data: { anything: [1, { "a.b": true }] }, at: "2026-11-23T10:00:00.000Z" };
    expect(checker.check("GET", url("/api/things/t1"), answer(200), body)).toEqual([]);
    expect(checker.check("GET", url("/api/things/special"), answer(200, "stable"), [])).toEqual([]);
    expect(checker.unexercised()).toEqual([]);
  });

  it("reports wrong types, unlisted fields, bad formats, undocumented statuses and routes, and header mismatches", () => {
    const checker = createConformanceChecker(doc);
    const problems = [
      checker.check("GET", url("/api/things/t1"), answer(200), { id: 1, data: null }),
      checker.check("GET", url("/api/things/t1"), answer(200), { id: "t1", data: 1, extra: true }),
      checker.check("GET", url("/api/things/t1"), answer(200), { id: "t1", data: 1, at: "yesterday" }),
      checker.check("GET", url("/api/things/t1"), answer(418), {}),
      checker.check("POST", url("/api/things/t1"), answer(200), {}),
      checker.check("GET", url("/api/things/t1"), answer(404, "stable", ""), {}),
    ];
    expect(problems.map((p) => p.length)).toEqual([1, 1, 1, 1, 1, 2]);
    expect(problems.flat().join("\n")).toMatch(/must be string[\s\S]*additional properties[\s\S]*date-time/);
    expect(checker.violations).toHaveLength(7);
    // The 200 answers above failed their schema but were seen; the special route never answered.
    expect(checker.unexercised()).toEqual(["GET /api/things/special"]);
  });
});
