import { DomainError } from "@kiln/kit/errors";
import { LIMITS } from "@kiln/kit/limits";
import { describe, expect, it } from "vitest";
import { Issues } from "./issues.js";
import { messagesOfVersion } from "./prompt-messages.js";
import { checkPromptVersion, type PromptVersionInput } from "./prompt-version.js";

function check(input: Partial<PromptVersionInput>) {
  const issues = new Issues();
  const content = checkPromptVersion(issues, { systemPrompt: "", ...input });
  try {
    issues.throwIfAny();
    return { content, details: [] };
  } catch (e) {
    if (!(e instanceof DomainError)) throw e;
    return { content, details: e.details };
  }
}

const SCHEMA = JSON.stringify({ type: "object", properties: { city: { type: "string" } } });

describe("chat prompt versions", () => {
  it("keeps a chat version's messages, its system and developer prompts empty", () => {
    const messages = [
      { role: "system", content: "Weather in {{city}}." },
      { role: "user", content: "Oslo?" },
      { role: "assistant", content: "Rain." },
      { role: "placeholder", name: "history" },
    ];
    const { content, details } = check({ messages, variablesSchemaJson: SCHEMA });
    expect(details).toEqual([]);
    expect(content).toMatchObject({ systemPrompt: "", developerPrompt: null, messages });
  });

  it("refuses each bad shape naming its field", () => {
    const { details } = check({
      systemPrompt: "Also this.",
      developerPrompt: "",
      variablesSchemaJson: SCHEMA,
      messages: [
        { role: "tool", content: "x" },
        { role: "placeholder", name: "h" },
        { role: "placeholder", name: "h", content: "x" },
        { role: "user", content: "{{town}}", name: "n" },
        { role: "assistant", content: "" },
        { role: "placeholder", name: "" },
      ],
    });
    expect(details).toEqual([
      { field: "systemPrompt", issue: "cannot be given with messages (put it in a system message)" },
      { field: "developerPrompt", issue: "cannot be given with messages (put it in a developer message)" },
      { field: "messages[0].role", issue: "must be system, developer, user, assistant or placeholder" },
      { field: "messages[2].name", issue: 'repeats the placeholder "h"' },
      { field: "messages[2].content", issue: "is not a field of a placeholder (it is filled at run time)" },
      { field: "messages[3].name", issue: "is only a field of a placeholder" },
      { field: "messages[3].content", issue: 'uses {{town}}, but variablesSchema declares no variable "town"' },
      { field: "messages[4].content", issue: "is required" },
      {
        field: "messages[5].name",
        issue: "must be 1 to 64 letters, digits, _ or - (starting with a letter or _)",
      },
    ]);
  });

  it("bounds the number of messages", () => {
    const messages = Array.from({ length: LIMITS.promptMessages + 1 }, () => ({ role: "user", content: "x" }));
    expect(check({ messages }).details).toEqual([
      { field: "messages", issue: `must hold at most ${LIMITS.promptMessages}` },
    ]);
  });

  it("reads a text version as the messages a run sends", () => {
    expect(messagesOfVersion({ systemPrompt: "S", developerPrompt: "D" })).toEqual([
      { role: "system", content: "S" },
      { role: "developer", content: "D" },
    ]);
    expect(messagesOfVersion({ systemPrompt: "S", developerPrompt: null, messages: null })).toEqual([
      { role: "system", content: "S" },
    ]);
  });
});
