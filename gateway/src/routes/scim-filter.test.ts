import { describe, expect, it } from "vitest";
import { ScimError } from "./scim-errors.js";
import { equalitiesOf, type FilterAttributes } from "./scim-filter.js";

const USERS: FilterAttributes = {
  username: { name: "userName", type: "string" },
  "emails.value": { name: "emails.value", type: "string" },
  externalid: { name: "externalId", type: "string" },
  active: { name: "active", type: "boolean" },
};

describe("equalitiesOf", () => {
  it.each([
    ['userName eq "ada@example.test"', { userName: "ada@example.test" }],
    ['USERNAME eq "a"', { userName: "a" }],
    ['urn:ietf:params:scim:schemas:core:2.0:User:userName eq "a"', { userName: "a" }],
    ['emails.value eq "a@x.io"', { "emails.value": "a@x.io" }],
    ['emails[type eq "work"].value eq "a@x.io"', { "emails.value": "a@x.io" }],
    ['emails[type eq "work" and value eq "a@x.io"]', { "emails.value": "a@x.io" }],
    ['externalId eq "00u1" and active eq true', { externalId: "00u1", active: true }],
    ["active eq false", { active: false }],
  ])("reads %s", (filter, expected) => {
    expect(equalitiesOf(filter, USERS)).toEqual(expected);
  });

  it("reads no filter as no condition", () => {
    expect(equalitiesOf(undefined, USERS)).toEqual({});
    expect(equalitiesOf("  ", USERS)).toEqual({});
  });

  it.each([
    ["another operator", 'userName ne "a"'],
    ["or", 'userName eq "a" or userName eq "b"'],
    ["not", 'not (userName eq "a")'],
    ["an unknown attribute", 'title eq "x"'],
    ["a string for a boolean", 'active eq "true"'],
    ["a boolean for a string", "userName eq true"],
    ["no value", "userName eq"],
    ["two values for one attribute", 'userName eq "a" and userName eq "b"'],
    ["a very long filter", `userName eq "${"a".repeat(1_000)}"`],
  ])("refuses %s with invalidFilter", (_, filter) => {
    let error: unknown;
    try {
      equalitiesOf(filter, USERS);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ScimError);
    expect(error).toMatchObject({ status: 400, scimType: "invalidFilter" });
  });
});
