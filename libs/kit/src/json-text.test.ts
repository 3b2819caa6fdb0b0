import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { JsonTextSchema } from "@kiln/proto/common";
import { describe, expect, it } from "vitest";
import { jsonText, jsonTextOf, optionalJsonText, readJson, readJsonText, textOf } from "./json-text.js";

describe("json-text", () => {
  it("makes the message create() makes, and it survives the wire", () => {
    const made = jsonText({ city: "Paris", "a.b": [1] });
    expect(made).toEqual(create(JsonTextSchema, { json: made.json }));
    expect(fromBinary(JsonTextSchema, toBinary(JsonTextSchema, made))).toEqual(made);
    expect(JSON.parse(made.json)).toEqual({ city: "Paris", "a.b": [1] });
    expect(jsonTextOf('{"x":1}')).toEqual(create(JsonTextSchema, { json: '{"x":1}' }));
  });

  it("leaves undefined unset and reads an unset message as undefined", () => {
    expect(optionalJsonText(undefined)).toBeUndefined();
    expect(textOf(undefined, "{}")).toBe("{}");
    expect(readJsonText(undefined)).toEqual({ ok: true, value: undefined });
  });

  it("refuses text that is not JSON or is nested past the bound", () => {
    expect(readJson("{")).toEqual({ ok: false, issue: "is not valid JSON" });
    expect(readJson("[[[1]]]", 2)).toEqual({ ok: false, issue: "is nested too deeply (at most 2 levels)" });
    expect(readJson("[[1]]", 2)).toEqual({ ok: true, value: [[1]] });
  });
});
