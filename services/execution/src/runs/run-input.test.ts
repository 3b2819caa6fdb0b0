import { toRequestBody } from "@kiln/models/openai-wire";
import { describe, expect, it } from "vitest";
import { type CallerPart, firstImageOf, parseMessages } from "./run-input.js";

const text = (value: string): CallerPart => ({ part: { case: "text", value } });
const image = (url: string, detail = ""): CallerPart => ({ part: { case: "image", value: { url, detail } } });

const issuesOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (e) {
    return (e as { details?: { field: string }[] }).details?.map((d) => d.field) ?? String(e);
  }
  throw new Error("expected an invalid argument");
};

describe("parseMessages: content parts", () => {
  it("keeps a user message's text and image parts, and finds the first image", () => {
    const messages = parseMessages([
      { role: "system", content: "s" },
      { role: "user", content: "a b", parts: [text("a "), image("https://x.example/p.png", "low"), text("b")] },
    ]);
    expect(messages[1]).toEqual({
      role: "user",
      content: "a b",
      parts: [
        { type: "text", text: "a " },
        { type: "image", url: "https://x.example/p.png", detail: "low" },
        { type: "text", text: "b" },
      ],
    });
    expect(firstImageOf(messages)).toBe("messages[1].parts[1]");
    expect(firstImageOf(parseMessages([{ role: "user", content: "plain" }]))).toBeUndefined();
  });

  it("refuses parts outside user messages, a URL that is not https or a data:image, an unknown detail", () => {
    expect(issuesOf(() => parseMessages([{ role: "system", content: "", parts: [text("x")] }]))).toEqual([
      "messages[0].parts",
    ]);
    for (const url of ["http://x/p.png", "file:///etc/passwd", "data:text/plain;base64,aGk=", "https://"]) {
      expect(issuesOf(() => parseMessages([{ role: "user", content: "", parts: [image(url)] }]))).toEqual([
        "messages[0].parts[0].url",
      ]);
    }
    expect(
      issuesOf(() => parseMessages([{ role: "user", content: "", parts: [image("https://x/p.png", "max")] }])),
    ).toEqual(["messages[0].parts[0].detail"]);
    expect(
      issuesOf(() => parseMessages([{ role: "user", content: "", parts: [{ part: { case: undefined } }] }])),
    ).toEqual(["messages[0].parts[0]"]);
  });

  it("sends the parts to an OpenAI-compatible provider as image_url content parts", () => {
    const body = toRequestBody(
      {
        model: "m",
        messages: parseMessages([
          { role: "user", content: "see", parts: [text("see"), image("data:image/png;base64,AAAA")] },
        ]),
      },
      { id: "stub", timeoutMs: 1_000, maxRetries: 0 },
    );
    expect(body.messages).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "see" },
          { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } },
        ],
      },
    ]);
  });
});
