import { describe, expect, it } from "vitest";
import { corsOriginsOf } from "./config.js";

describe("corsOriginsOf", () => {
  it("reads comma-separated origins; empty is off", () => {
    expect(corsOriginsOf("")).toEqual([]);
    expect(corsOriginsOf(" https://app.example.com , http://localhost:5173")).toEqual([
      "https://app.example.com",
      "http://localhost:5173",
    ]);
  });

  it("refuses what is not an origin", () => {
    for (const bad of ["*", "app.example.com", "https://app.example.com/", "https://app.example.com/path"]) {
      expect(() => corsOriginsOf(bad)).toThrow(/CORS_ORIGINS/);
    }
  });
});
