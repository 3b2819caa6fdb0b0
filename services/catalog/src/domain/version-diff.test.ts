import jsonPatch from "fast-json-patch";
import { describe, expect, it } from "vitest";
import type { JsonObject } from "./json-schema.js";
import { diffDocuments, summarize } from "./version-diff.js";

const v1: JsonObject = {
  type: "manual_stub",
  config: { result: { city: "Oslo", temp: 3 } },
  inputSchema: { type: "object", required: ["city"] },
};
const v2: JsonObject = {
  type: "manual_stub",
  config: { result: { city: "Bergen", temp: 3 } },
  inputSchema: { type: "object", required: ["city", "days"] },
};

describe("diffDocuments", () => {
  it("lists replaced and added values with JSON Pointer paths and before/after", () => {
    const diff = diffDocuments(v1, v2);
    expect(diff.changes).toEqual([
      { op: "add", path: "/inputSchema/required/1", after: "days" },
      { op: "replace", path: "/config/result/city", before: "Oslo", after: "Bergen" },
    ]);
    expect(diff.summary).toBe("2 changes: added /inputSchema/required/1, replaced /config/result/city");
  });

  it("gives removed values their before", () => {
    const diff = diffDocuments(v2, v1);
    expect(diff.changes).toContainEqual({ op: "remove", path: "/inputSchema/required/1", before: "days" });
  });

  it("against nothing, every top-level field is an add", () => {
    const diff = diffDocuments(null, v1);
    expect(diff.changes).toEqual([
      { op: "add", path: "/type", after: "manual_stub" },
      { op: "add", path: "/config", after: v1.config },
      { op: "add", path: "/inputSchema", after: v1.inputSchema },
    ]);
    expect(diff.summary).toBe("3 changes: added /type, added /config, added /inputSchema");
  });

  it("finds no changes between equal documents", () => {
    expect(diffDocuments(v1, structuredClone(v1))).toEqual({ changes: [], summary: "no changes" });
  });

  it("escapes keys per RFC 6901 and treats __proto__, $ref and dotted keys as plain keys", () => {
    const before = JSON.parse('{"s":{"__proto__":{"a":1},"a/b":1,"t~":1,"$ref":"#/x","a.b":1}}');
    const after = JSON.parse('{"s":{"__proto__":{"a":2},"a/b":2,"t~":2,"$ref":"#/y","a.b":2}}');
    const paths = diffDocuments(before, after).changes.map((c) => c.path);
    expect(paths.sort()).toEqual(["/s/$ref", "/s/__proto__/a", "/s/a.b", "/s/a~1b", "/s/t~0"]);
  });

  it("replaces a value whose kind changed (object to array, scalar to object)", () => {
    const diff = diffDocuments({ a: { x: 1 }, b: 1 }, { a: [1], b: { y: 2 } });
    expect(diff.changes).toEqual([
      { op: "replace", path: "/b", before: 1, after: { y: 2 } },
      { op: "replace", path: "/a", before: { x: 1 }, after: [1] },
    ]);
  });

  it("yields a JSON Patch that turns from into to", () => {
    const from = JSON.parse('{"a":[1,2,3,4],"b":{"c":{"d":1}},"e":"x","__proto__":{"z":1}}');
    const to = JSON.parse('{"a":[4,2],"b":{"c":{"f":2}},"g":null,"__proto__":{"z":2}}');
    const { changes } = diffDocuments(from, to);
    const patch = changes.map((c) =>
      c.op === "remove" ? { op: c.op, path: c.path } : { op: c.op, path: c.path, value: c.after },
    ) as jsonPatch.Operation[];
    const result = jsonPatch.applyPatch(structuredClone(from), patch, true, true, false).newDocument;
    // Same content; an applied `add` appends, so key order may differ.
    expect(result).toEqual(to);
    expect(Object.getOwnPropertyDescriptor(result, "__proto__")?.value).toEqual({ z: 2 });
  });
});

describe("summarize", () => {
  it("lists at most five changes", () => {
    const changes = Array.from({ length: 7 }, (_, i) => ({ op: "add" as const, path: `/x/${i}`, after: i }));
    expect(summarize(changes)).toBe(
      "7 changes: added /x/0, added /x/1, added /x/2, added /x/3, added /x/4, and 2 more",
    );
    expect(summarize(changes.slice(0, 1))).toBe("1 change: added /x/0");
  });
});
