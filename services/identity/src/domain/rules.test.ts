import { DomainError } from "@kiln/kit/errors";
import { describe, expect, it } from "vitest";
import {
  AI_PLATFORM_PERMISSION,
  checkPassword,
  checkScopes,
  FREE_PLAN,
  Issues,
  normalizeEmail,
  ROLE_PERMISSIONS,
} from "./rules.js";

/** The field issues `issues` would throw, or [] when it would not throw. */
function issuesOf(issues: Issues): { field: string; issue: string }[] {
  try {
    issues.throwIfAny();
    return [];
  } catch (e) {
    if (!(e instanceof DomainError) || e.kind !== "invalid_argument") throw e;
    return e.details;
  }
}

describe("Issues", () => {
  it("throws nothing when there is no issue", () => {
    expect(() => new Issues().throwIfAny()).not.toThrow();
  });

  it("throws every issue at once as one invalid_argument", () => {
    const issues = new Issues().add("a", "is wrong").add("b.c", "is wrong too");
    expect(() => issues.throwIfAny("bad input")).toThrow("bad input");
    expect(issuesOf(issues)).toEqual([
      { field: "a", issue: "is wrong" },
      { field: "b.c", issue: "is wrong too" },
    ]);
  });

  it("trims text and checks its length after trimming", () => {
    const issues = new Issues();
    expect(issues.text("name", "  Ada  ")).toBe("Ada");
    issues.text("blank", "   ");
    issues.text("short", " ab ", { min: 3 });
    issues.text("long", "x".repeat(201));
    issues.text("fits", "x".repeat(200));
    issues.text("optional", "", { min: 0 });
    expect(issuesOf(issues)).toEqual([
      { field: "blank", issue: "is required" },
      { field: "short", issue: "must be at least 3 characters" },
      { field: "long", issue: "must be at most 200 characters" },
    ]);
  });
});

describe("normalizeEmail", () => {
  it("trims and lower-cases the address", () => {
    const issues = new Issues();
    expect(normalizeEmail(issues, "  Ada.Lovelace@Example.COM ")).toBe("ada.lovelace@example.com");
    expect(issuesOf(issues)).toEqual([]);
  });

  it.each([
    ["no @", "ada.example.com"],
    ["no domain dot", "ada@example"],
    ["nothing before @", "@example.com"],
    ["a space inside", "ada lovelace@example.com"],
    ["two @", "ada@lovelace@example.com"],
    ["longer than 254 characters", `${"a".repeat(250)}@example.com`],
  ])("refuses an address with %s", (_, email) => {
    const issues = new Issues();
    normalizeEmail(issues, email);
    expect(issuesOf(issues)).toEqual([{ field: "email", issue: "must be an e-mail address" }]);
  });
});

describe("checkPassword", () => {
  it("accepts 8 to 256 characters", () => {
    for (const length of [8, 256]) {
      const issues = new Issues();
      checkPassword(issues, "p".repeat(length));
      expect(issuesOf(issues)).toEqual([]);
    }
  });

  it("refuses fewer than 8 and more than 256 characters", () => {
    const short = new Issues();
    checkPassword(short, "p".repeat(7));
    expect(issuesOf(short)).toEqual([{ field: "password", issue: "must be at least 8 characters" }]);
    const long = new Issues();
    checkPassword(long, "p".repeat(257));
    expect(issuesOf(long)).toEqual([{ field: "password", issue: "must be at most 256 characters" }]);
  });
});

describe("checkScopes", () => {
  it("returns the scopes once each, in their order", () => {
    const issues = new Issues();
    expect(checkScopes(issues, ["runs:write", "prompts:read", "runs:write"])).toEqual(["runs:write", "prompts:read"]);
    expect(issuesOf(issues)).toEqual([]);
  });

  it("refuses an empty list", () => {
    const issues = new Issues();
    checkScopes(issues, []);
    expect(issuesOf(issues)).toEqual([{ field: "scopes", issue: "must name at least one scope" }]);
  });

  it("names each unknown scope by its position", () => {
    const issues = new Issues();
    checkScopes(issues, ["prompts:read", "prompts:admin", "runs:write", "everything"]);
    expect(issuesOf(issues)).toEqual([
      { field: "scopes[1]", issue: 'unknown scope "prompts:admin"' },
      { field: "scopes[3]", issue: 'unknown scope "everything"' },
    ]);
  });
});

describe("plans and roles", () => {
  it("gives the Free plan AI", () => {
    expect(FREE_PLAN.plan).toBe("free");
    expect(FREE_PLAN.entitlements.aiEnabled).toBe(true);
  });

  it("lets every role use the AI platform and only owners and admins manage API keys", () => {
    for (const permissions of Object.values(ROLE_PERMISSIONS)) expect(permissions).toContain(AI_PLATFORM_PERMISSION);
    expect(ROLE_PERMISSIONS.owner).toContain("manage_api_keys");
    expect(ROLE_PERMISSIONS.admin).toContain("manage_api_keys");
    expect(ROLE_PERMISSIONS.member).not.toContain("manage_api_keys");
  });
});
