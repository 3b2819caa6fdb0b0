import { describe, expect, it } from "vitest";
import { ScimError } from "./scim-errors.js";
import { PATCH_OP_SCHEMA, patched } from "./scim-patch.js";

const user = () => ({
  userName: "ada@example.test",
  active: true,
  name: { givenName: "Ada", familyName: "Lovelace" },
  emails: [{ value: "ada@example.test", type: "work", primary: true }],
});
const body = (...Operations: unknown[]) => ({ schemas: [PATCH_OP_SCHEMA], Operations });

/** The scimType of the SCIM error `run` throws. */
function scimTypeOf(run: () => unknown): string | undefined {
  try {
    run();
  } catch (e) {
    if (e instanceof ScimError) return e.scimType;
    throw e;
  }
  throw new Error("did not throw");
}

describe("patched", () => {
  it("applies Okta's path-less replace and Entra's Replace with a path, op names in any case", () => {
    expect(patched(user(), body({ op: "replace", value: { active: false } })).active).toBe(false);
    expect(patched(user(), body({ op: "Replace", path: "active", value: "False" })).active).toBe("False");
    const renamed = patched(user(), body({ op: "REPLACE", path: "name.givenName", value: "Augusta" }));
    expect(renamed.name).toEqual({ givenName: "Augusta", familyName: "Lovelace" });
  });

  it("sets and makes filtered sub-attributes, and leaves the input as it was", () => {
    const original = user();
    const out = patched(
      original,
      body({ op: "Replace", path: 'emails[type eq "work"].value', value: "b@example.test" }),
    );
    expect(out.emails).toEqual([{ value: "b@example.test", type: "work", primary: true }]);
    expect(original.emails[0]?.value).toBe("ada@example.test");
    const none = patched({ userName: "x" }, body({ op: "Add", path: 'emails[type eq "work"].value', value: "c@x.io" }));
    expect(none.emails).toEqual([{ type: "work", value: "c@x.io" }]);
  });

  it("adds members without doubles and removes them by filter or by value", () => {
    const group = { displayName: "g", members: [{ value: "a" }, { value: "b" }] };
    const added = patched(group, body({ op: "Add", path: "members", value: [{ value: "b" }, { value: "c" }] }));
    expect(added.members).toEqual([{ value: "a" }, { value: "b" }, { value: "c" }]);
    const byFilter = patched(added, body({ op: "Remove", path: 'members[value eq "b"]' }));
    expect(byFilter.members).toEqual([{ value: "a" }, { value: "c" }]);
    const byValue = patched(added, body({ op: "remove", path: "members", value: [{ value: "a" }, { value: "c" }] }));
    expect(byValue.members).toEqual([{ value: "b" }]);
    expect(patched(added, body({ op: "remove", path: "members" })).members).toBeUndefined();
    expect(patched(added, body({ op: "replace", path: "members", value: [] })).members).toEqual([]);
  });

  it("keeps extension attributes beside the core ones and strips the core schema's prefix", () => {
    const out = patched(
      user(),
      body(
        { op: "Add", path: "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department", value: "Navy" },
        { op: "replace", path: "urn:ietf:params:scim:schemas:core:2.0:User:userName", value: "grace@example.test" },
      ),
    );
    expect(out["urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"]).toEqual({ department: "Navy" });
    expect(out.userName).toBe("grace@example.test");
  });

  it.each([
    ["no Operations", { schemas: [PATCH_OP_SCHEMA] }, "invalidSyntax"],
    ["an empty list", body(), "invalidSyntax"],
    ["an unknown op", body({ op: "move", path: "active" }), "invalidSyntax"],
    ["a remove without a path", body({ op: "remove" }), "noTarget"],
    ["a path-less add of a non-object", body({ op: "add", value: 3 }), "invalidSyntax"],
    ["a malformed path", body({ op: "replace", path: "emails[type eq]", value: 1 }), "invalidPath"],
    ["a filter matching nothing", body({ op: "replace", path: 'members[value eq "z"]', value: {} }), "noTarget"],
  ])("refuses %s", (_, patch, scimType) => {
    expect(scimTypeOf(() => patched(user(), patch))).toBe(scimType);
  });
});
