import type { ModelDelta } from "@kiln/models/provider";
import { describe, expect, it } from "vitest";
import { streamOf } from "./run-stream.js";

describe("streamOf", () => {
  it("forwards text and the caller's tool calls (renumbered per turn), drops the version's own", () => {
    const out: ModelDelta[] = [];
    const stream = streamOf((d) => out.push(d), new Set(["lookup"]));
    stream.newTurn();
    stream.onDelta({ type: "text", text: "Let me check. " });
    stream.onDelta({ type: "tool_call", index: 0, id: "c0", name: "kiln_tool", arguments: "{" });
    stream.onDelta({ type: "tool_call", index: 1, id: "c1", name: "lookup", arguments: '{"q"' });
    stream.onDelta({ type: "tool_call", index: 0, arguments: "}" });
    stream.onDelta({ type: "tool_call", index: 1, arguments: ':"x"}' });
    stream.newTurn();
    stream.onDelta({ type: "tool_call", index: 0, id: "c2", name: "lookup", arguments: "{}" });
    expect(out).toEqual([
      { type: "text", text: "Let me check. " },
      { type: "tool_call", index: 0, id: "c1", name: "lookup", arguments: '{"q"' },
      { type: "tool_call", index: 0, arguments: ':"x"}' },
      { type: "tool_call", index: 0, id: "c2", name: "lookup", arguments: "{}" },
    ]);
    expect(stream.text()).toBe("Let me check. ");
  });
});
