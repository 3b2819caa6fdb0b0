import { describe, expect, it } from "vitest";
import { UNMAPPED_LIMIT, unmappedAttributesOf } from "./unmapped-attributes.js";

describe("unmappedAttributesOf", () => {
  it("lists the keys no source of the mapping reads, in the order they came", () => {
    expect(
      unmappedAttributesOf({
        "gen_ai.request.model": "gpt-4o",
        "server.address": "api.openai.com",
        // Read below their prefix: the indexed messages and the request parameters.
        "gen_ai.prompt.0.content": "Hi",
        "gen_ai.request.temperature": 0.2,
        "llm.input_messages.0.message.role": "user",
        "traceloop.span.kind": "tool",
        "kiln.run.id": "run_1",
        "kiln.prompt.id": "prm_1",
        "llm.token_count.total": 12,
        // A prefix alone is not an indexed key of it.
        "gen_ai.promptly": true,
      }),
    ).toEqual({
      unmappedAttributes: ["server.address", "kiln.prompt.id", "llm.token_count.total", "gen_ai.promptly"],
      unmappedAttributesTruncated: false,
    });
  });

  it(`keeps the first ${UNMAPPED_LIMIT} and says there were more`, () => {
    const attributes = Object.fromEntries(Array.from({ length: UNMAPPED_LIMIT + 1 }, (_, i) => [`app.k${i}`, i]));
    const r = unmappedAttributesOf(attributes);
    expect(r.unmappedAttributes).toHaveLength(UNMAPPED_LIMIT);
    expect(r.unmappedAttributes[0]).toBe("app.k0");
    expect(r.unmappedAttributesTruncated).toBe(true);
    expect(
      unmappedAttributesOf(Object.fromEntries(Object.entries(attributes).slice(1))).unmappedAttributesTruncated,
    ).toBe(false);
  });
});
