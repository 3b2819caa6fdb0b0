import { create } from "@bufbuild/protobuf";
import { ResourceSpansSchema } from "@kiln/proto/otlp/trace";
import { describe, expect, it } from "vitest";
import { spanChunks } from "./span-mapping.js";

const resource = (name: string, scopes: number[]) =>
  create(ResourceSpansSchema, {
    resource: { attributes: [{ key: "service.name", value: { value: { case: "stringValue", value: name } } }] },
    scopeSpans: scopes.map((n, s) => ({
      scope: { name: `${name}-scope-${s}` },
      spans: Array.from({ length: n }, (_, i) => ({ name: `${name}-${s}-${i}` })),
    })),
  });

describe("spanChunks", () => {
  it("cuts resource spans into pieces of at most `size` spans, in order, each keeping its resource and scope", () => {
    const input = [resource("a", [3, 4]), resource("b", [6])];
    const pieces = [...spanChunks(input, 5)];
    const shape = pieces.map((p) =>
      p.flatMap((rs) => rs.scopeSpans.map((ss) => `${ss.scope?.name}:${ss.spans.map((s) => s.name).join(",")}`)),
    );
    expect(shape).toEqual([
      ["a-scope-0:a-0-0,a-0-1,a-0-2", "a-scope-1:a-1-0,a-1-1"],
      ["a-scope-1:a-1-2,a-1-3", "b-scope-0:b-0-0,b-0-1,b-0-2"],
      ["b-scope-0:b-0-3,b-0-4,b-0-5"],
    ]);
    for (const p of pieces) expect(p.every((rs) => rs.resource?.attributes[0]?.key === "service.name")).toBe(true);
    expect([...spanChunks([], 5)]).toEqual([]);
  });
});
