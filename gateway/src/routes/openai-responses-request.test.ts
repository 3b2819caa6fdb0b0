import { create } from "@bufbuild/protobuf";
import { jsonText } from "@kiln/kit/json-text";
import { RunSchema } from "@kiln/proto/execution";
import { describe, expect, it } from "vitest";
import { OpenAiHttpError } from "./openai-errors.js";
import { withReferencesResolved } from "./openai-responses-references.js";
import { responsesRequestOf } from "./openai-responses-request.js";

const paramOfError = (f: () => unknown): string | null | undefined => {
  try {
    f();
  } catch (e) {
    if (e instanceof OpenAiHttpError) return e.body.error.param;
    throw e;
  }
  return undefined;
};

describe("responsesRequestOf", () => {
  it("reads instructions and items as the run's messages; calls join the assistant message before them", () => {
    const request = responsesRequestOf({
      model: "kiln/p",
      instructions: "Be kind.",
      input: [
        { role: "user", content: "Trip?" },
        { type: "message", role: "assistant", content: [{ type: "output_text", text: "Let me look." }] },
        { type: "function_call", call_id: "c1", name: "lookup", arguments: '{"city":"Oslo"}', id: "fc_c1" },
        { type: "function_call", call_id: "c2", name: "lookup", arguments: "" },
        { type: "function_call_output", call_id: "c1", output: [{ type: "input_text", text: "cold" }] },
      ],
    });
    expect(request.run.messages).toEqual([
      { role: "system", content: "Be kind." },
      { role: "user", content: "Trip?" },
      {
        role: "assistant",
        content: "Let me look.",
        toolCalls: [
          { id: "c1", name: "lookup", arguments: jsonText({ city: "Oslo" }) },
          { id: "c2", name: "lookup", arguments: jsonText({}) },
        ],
      },
      { role: "tool", content: "cold", toolCallId: "c1" },
    ]);
    // The run request's field names, as the Responses request names them.
    expect(request.paramOf("messages[0].content")).toBe("instructions");
    expect(request.paramOf("messages[2].toolCalls[1].arguments")).toBe("input[3].arguments");
    expect(request.paramOf("messages[2].toolCalls[0]")).toBe("input[2]");
    expect(request.paramOf("messages[3].toolCallId")).toBe("input[4].call_id");
    expect(request.paramOf("parameters.maxOutputTokens")).toBe("max_output_tokens");
    expect(request.paramOf("responseFormat")).toBe("text.format");
    expect(request.paramOf("variables.city")).toBe("variables.city");
    expect(request.promptOnlyField).toBeUndefined();
    expect(request.messagesField).toBe("instructions");
  });

  it("names a prompt-only field for skills, and refuses what it cannot honour by name", () => {
    const request = responsesRequestOf({ model: "kiln/skill/s", text: { format: { type: "json_object" } } });
    expect(request.promptOnlyField).toBe("text");
    expect(request.run.messages).toEqual([]);
    expect(paramOfError(() => responsesRequestOf({ model: "kiln/p", input: 3 }))).toBe("input");
    expect(paramOfError(() => responsesRequestOf({ model: "kiln/p", input: [{ type: "item_reference" }] }))).toBe(
      "input[0].type",
    );
    expect(paramOfError(() => responsesRequestOf({ model: "kiln/p", input: [{ role: "tool", content: "x" }] }))).toBe(
      "input[0].role",
    );
    expect(
      paramOfError(() =>
        responsesRequestOf({ model: "kiln/p", input: [{ type: "function_call", call_id: "c", name: "f", x: 1 }] }),
      ),
    ).toBe("input[0].x");
    expect(paramOfError(() => responsesRequestOf({ model: "kiln/p", text: { format: { type: "xml" } } }))).toBe(
      "text.format.type",
    );
    expect(
      paramOfError(() => responsesRequestOf({ model: "kiln/p", stream_options: { include_obfuscation: true } })),
    ).toBe("stream_options.include_obfuscation");
    // Defaults pass.
    expect(
      paramOfError(() =>
        responsesRequestOf({ model: "kiln/p", store: false, include: [], truncation: "disabled", reasoning: {} }),
      ),
    ).toBeUndefined();
  });

  it('takes the empty defaults LlamaIndex sends on every call: user "", metadata {}, instructions ""', () => {
    const request = responsesRequestOf({ model: "kiln/p", input: "Hi", user: "", metadata: {}, instructions: "" });
    expect(request.run.messages).toEqual([{ role: "user", content: "Hi" }]);
    expect(request.run.variables).toEqual(jsonText({}));
    expect(request.messagesField).toBe("input");
    // A skill takes empty instructions too: they are no message.
    expect(responsesRequestOf({ model: "kiln/skill/s", instructions: "" }).run.messages).toEqual([]);
    // Text in them is still refused, and metadata still carries only the variables.
    expect(paramOfError(() => responsesRequestOf({ model: "kiln/p", user: "u1" }))).toBe("user");
    expect(paramOfError(() => responsesRequestOf({ model: "kiln/p", metadata: { team: "x" } }))).toBe("metadata.team");
    expect(responsesRequestOf({ model: "kiln/p", metadata: { variables: '{"person":"Ada"}' } }).run.variables).toEqual(
      jsonText({ person: "Ada" }),
    );
  });
});

describe("withReferencesResolved", () => {
  const answered = create(RunSchema, { id: "run_1", status: "succeeded", output: jsonText({ text: "Earlier" }) });
  const readRun = async (id: string) => (id === "run_1" ? answered : undefined);

  it("reads a reference to an earlier answer's message as that answer", async () => {
    const body = {
      model: "kiln/p",
      input: [
        { type: "item_reference", id: "msg_run_1" },
        { role: "user", content: "Next" },
      ],
    };
    expect(await withReferencesResolved(body, readRun)).toEqual({
      model: "kiln/p",
      input: [
        { type: "message", role: "assistant", content: "Earlier", id: "msg_run_1" },
        { role: "user", content: "Next" },
      ],
    });
  });

  it("refuses a reference to anything else, naming the item's id", async () => {
    for (const id of ["msg_run_2", "fc_call_1", "rs_1", undefined]) {
      const error = await withReferencesResolved(
        {
          input: [
            { role: "user", content: "x" },
            { type: "item_reference", id },
          ],
        },
        readRun,
      ).then(
        () => undefined,
        (e: OpenAiHttpError) => e.body.error.param,
      );
      expect(error).toBe("input[1].id");
    }
  });
});
