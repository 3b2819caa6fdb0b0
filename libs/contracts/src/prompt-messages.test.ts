import { describe, expect, it } from "vitest";
import { placeMessages, type TemplateMessage, templateOf } from "./prompt-messages.js";

describe("templateOf", () => {
  it("is a chat version's messages, else the system prompt and the developer prompt when there is one", () => {
    const messages: TemplateMessage[] = [{ role: "placeholder", name: "history" }];
    expect(templateOf({ systemPrompt: "s", developerPrompt: "d", messages })).toBe(messages);
    expect(templateOf({ systemPrompt: "s", developerPrompt: "d", messages: [] })).toEqual([
      { role: "system", content: "s" },
      { role: "developer", content: "d" },
    ]);
    expect(templateOf({ systemPrompt: "s", developerPrompt: null })).toEqual([{ role: "system", content: "s" }]);
  });
});

describe("placeMessages", () => {
  const own = [{ role: "user" as const, content: "mine" }];

  it("puts a conversation variable at its placeholder and the caller's messages at the first other one", () => {
    const filled: TemplateMessage[] = [
      { role: "system", content: "s" },
      { role: "placeholder", name: "history" },
      { role: "placeholder", name: "notes" },
      { role: "placeholder", name: "more" },
      { role: "user", content: "u" },
    ];
    const history = [{ role: "assistant", content: "earlier", extra: true }];
    expect(placeMessages(filled, { history, notes: "not a conversation" }, own)).toEqual([
      { role: "system", content: "s" },
      { role: "assistant", content: "earlier" },
      { role: "user", content: "mine" },
      { role: "user", content: "u" },
    ]);
  });

  it("appends the caller's messages when no placeholder is left for them", () => {
    const filled: TemplateMessage[] = [
      { role: "system", content: "s" },
      { role: "placeholder", name: "history" },
    ];
    expect(placeMessages(filled, { history: [{ role: "user", content: "h" }] }, own)).toEqual([
      { role: "system", content: "s" },
      { role: "user", content: "h" },
      { role: "user", content: "mine" },
    ]);
    // A list that is not a conversation of text roles is not taken for one.
    expect(placeMessages(filled, { history: [{ role: "tool", content: "x" }] }, [])).toEqual([
      { role: "system", content: "s" },
    ]);
  });
});
