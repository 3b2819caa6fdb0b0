import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { HttpError } from "../errors.js";
import { openAiErrorOf } from "./openai-errors.js";
import { parseModel } from "./openai-model-ref.js";

describe("parseModel", () => {
  it("reads prompts, skills and labels", () => {
    expect(parseModel("kiln/Greeting")).toEqual({ kind: "prompt", ref: "Greeting", label: "production" });
    expect(parseModel("kiln/prm_1@staging")).toEqual({ kind: "prompt", ref: "prm_1", label: "staging" });
    expect(parseModel("kiln/prompt/skill/odd")).toEqual({ kind: "prompt", ref: "skill/odd", label: "production" });
    expect(parseModel("kiln/skill/Trip advice@production")).toEqual({
      kind: "skill",
      ref: "Trip advice",
      label: "production",
    });
    expect(parseModel("kiln/a@b@c")).toEqual({ kind: "prompt", ref: "a@b", label: "c" });
  });

  it("refuses what names nothing", () => {
    for (const model of ["gpt-4o", "kiln/", "kiln/skill/", "kiln/x@", "kiln/@production", "Kiln/x"]) {
      expect(parseModel(model)).toBeUndefined();
    }
  });
});

describe("openAiErrorOf", () => {
  it("maps Kiln errors to OpenAI's shape and statuses", () => {
    expect(openAiErrorOf(new HttpError("unauthenticated", "bad key"), "req_1")).toEqual({
      status: 401,
      body: { error: { message: "bad key", type: "invalid_request_error", param: null, code: "invalid_api_key" } },
    });
    const missing = openAiErrorOf(
      new HttpError("invalid_argument", "the variables do not match", [
        { field: "variables.city", issue: "is required" },
      ]),
      "req_1",
    );
    expect(missing.status).toBe(400);
    expect(missing.body.error).toMatchObject({ type: "invalid_request_error", param: "variables.city", code: null });
    expect(missing.body.error.message).toContain("variables.city is required");
    expect(openAiErrorOf(new ConnectError("no prompt", Code.NotFound), "r").body.error.code).toBe("model_not_found");
    expect(openAiErrorOf(new HttpError("resource_exhausted", "slow down"), "r")).toMatchObject({
      status: 429,
      body: { error: { type: "requests", code: "rate_limit_exceeded" } },
    });
    expect(openAiErrorOf(new HttpError("already_exists", "x"), "r").status).toBe(400);
    expect(openAiErrorOf(new Error("boom"), "r")).toMatchObject({
      status: 500,
      body: { error: { type: "api_error", message: "internal error" } },
    });
  });
});
