import { DomainError } from "@kiln/kit/errors";
import { jsonText } from "@kiln/kit/json-text";
import { describe, expect, it } from "vitest";
import { checkAgainstVersion, parseCallerOptions } from "./caller-options.js";
import { parseMessages } from "./run-input.js";
import type { RunnablePrompt } from "./runnable.js";

const detailsOf = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(DomainError);
    return (e as DomainError).details;
  }
  throw new Error("expected a throw");
};

const prompt = (over: Partial<RunnablePrompt> = {}): RunnablePrompt => ({
  organizationId: "org_1",
  promptId: "prm_1",
  promptVersionId: "pv_1",
  systemPrompt: "s",
  developerPrompt: null,
  variablesSchema: { type: "object" },
  responseFormat: { type: "text" },
  temperature: null,
  maxOutputTokens: null,
  model: null,
  tools: [],
  ...over,
});

const SCHEMA = { type: "object", properties: { a: { type: "string" } } };

describe("parseCallerOptions", () => {
  it("reads tools, tool choice, response format and sampling", () => {
    const options = parseCallerOptions({
      tools: [{ name: "lookup", description: "Looks up", parameters: jsonText(SCHEMA) }],
      toolChoice: { mode: "tool", name: "lookup" },
      responseFormat: jsonText({ type: "json_object" }),
      parameters: { temperature: 0.2, maxOutputTokens: 5, stop: ["END"], seed: 7n, topP: 0.5 },
    });
    expect(options).toEqual({
      tools: [{ name: "lookup", description: "Looks up", inputSchema: SCHEMA }],
      toolChoice: { name: "lookup" },
      responseFormat: { type: "json_object" },
      sampling: { temperature: 0.2, maxOutputTokens: 5, stop: ["END"], seed: 7, topP: 0.5 },
    });
    expect(parseCallerOptions({})).toEqual({ tools: [], sampling: {} });
  });

  it("names the field of what is malformed", () => {
    expect(detailsOf(() => parseCallerOptions({ tools: [{ name: "a b", description: "" }] }))[0]?.field).toBe(
      "tools[0].name",
    );
    expect(
      detailsOf(() => parseCallerOptions({ tools: [], toolChoice: { mode: "tool", name: "nope" } }))[0]?.field,
    ).toBe("toolChoice.name");
    expect(detailsOf(() => parseCallerOptions({ responseFormat: jsonText({ type: "xml" }) }))[0]?.field).toBe(
      "responseFormat.type",
    );
    expect(
      detailsOf(() => parseCallerOptions({ parameters: { temperature: 3, stop: ["a", "b", "c", "d", "e"] } })).map(
        (d) => d.field,
      ),
    ).toEqual(["parameters.temperature", "parameters.stop"]);
  });
});

describe("checkAgainstVersion", () => {
  const own = { type: "json_schema" as const, name: "r", schema: SCHEMA };

  it("takes the caller's response format when the prompt has none, the prompt's own otherwise", () => {
    const asked = parseCallerOptions({ responseFormat: jsonText({ type: "json_schema", name: "x", schema: SCHEMA }) });
    expect(checkAgainstVersion(prompt(), asked)).toEqual({ type: "json_schema", name: "x", schema: SCHEMA });
    expect(checkAgainstVersion(prompt({ responseFormat: own }), asked)).toEqual(own);
    expect(checkAgainstVersion(prompt({ responseFormat: own }), parseCallerOptions({}))).toEqual(own);
  });

  it("refuses a response format other than the prompt's own, and a tool named like the prompt's", () => {
    for (const rf of [{ type: "json_object" }, { type: "text" }, { type: "json_schema", schema: { type: "object" } }]) {
      const options = parseCallerOptions({ responseFormat: jsonText(rf) });
      expect(detailsOf(() => checkAgainstVersion(prompt({ responseFormat: own }), options))[0]?.field).toBe(
        "responseFormat",
      );
    }
    const withTool = prompt({
      tools: [
        {
          toolKey: "lookup",
          toolVersionId: "tv",
          type: "manual_stub",
          config: {},
          inputSchema: {},
          organizationId: "o",
          description: "",
        },
      ],
    });
    const options = parseCallerOptions({ tools: [{ name: "lookup", description: "" }] });
    expect(detailsOf(() => checkAgainstVersion(withTool, options))[0]?.field).toBe("tools[0].name");
  });
});

describe("parseMessages", () => {
  it("takes every role, and the tool call round trip", () => {
    const messages = parseMessages([
      { role: "system", content: "s" },
      { role: "developer", content: "d" },
      { role: "user", content: "u" },
      { role: "assistant", content: "", toolCalls: [{ id: "c1", name: "lookup", arguments: jsonText({ q: 1 }) }] },
      { role: "tool", content: "42", toolCallId: "c1" },
    ]);
    expect(messages).toEqual([
      { role: "system", content: "s" },
      { role: "developer", content: "d" },
      { role: "user", content: "u" },
      { role: "assistant", content: "", toolCalls: [{ id: "c1", name: "lookup", input: { q: 1 } }] },
      { role: "tool", content: "42", toolCallId: "c1" },
    ]);
  });

  it("refuses a tool message that answers no earlier call", () => {
    expect(detailsOf(() => parseMessages([{ role: "tool", content: "x", toolCallId: "c9" }]))).toEqual([
      { field: "messages[0].toolCallId", issue: "names no tool call of an earlier assistant message" },
    ]);
  });
});
