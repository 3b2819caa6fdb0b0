/**
 * What each role may do in its organization (docs/security.md "Roles"): a permission is an API-key
 * scope (`prompts:write`), so a role grants a user what a key with those scopes may do. Owners,
 * admins and members may do all of it (owners and admins besides manage members and keys);
 * viewers read everything a member reads and change nothing; a custom role grants the scopes it
 * names. Every route's scope is checked against the caller's role where identity authorizes it.
 */
import { API_KEY_SCOPES } from "@kiln/contracts/api-key-scopes";
import { type BuiltInRole, CUSTOM_ROLE_NAME, checkScopes, Issues, isBuiltInRole } from "./rules.js";

/** Reads a viewer may make: every read scope but the audit log's, which owners and admins read. */
export const VIEWER_SCOPES: readonly string[] = API_KEY_SCOPES.filter((s) => s.endsWith(":read") && s !== "audit:read");

/** The scopes a built-in role grants; null: every scope. */
export const builtInScopes = (role: BuiltInRole): readonly string[] | null =>
  role === "viewer" ? VIEWER_SCOPES : null;

/** Most custom roles one organization keeps. */
export const MAX_CUSTOM_ROLES = 50;

export interface CustomRoleInput {
  name?: string;
  description?: string;
  scopes?: string[];
}

/** A new or changed custom role's fields, checked together (400 naming each field). */
export function checkCustomRole(input: CustomRoleInput, creating: boolean) {
  const issues = new Issues();
  let name = "";
  if (creating) {
    name = (input.name ?? "").trim();
    if (isBuiltInRole(name)) issues.add("name", `is a built-in role`);
    else if (!CUSTOM_ROLE_NAME.test(name))
      issues.add("name", "must be 2 to 40 lowercase letters, digits or dashes, starting with a letter");
  }
  const description = input.description === undefined ? undefined : input.description.trim();
  if (description !== undefined && description.length > 500)
    issues.add("description", "must be at most 500 characters");
  let scopes: string[] | undefined;
  if (input.scopes !== undefined || creating) {
    scopes = checkScopes(issues, input.scopes ?? []);
  }
  issues.throwIfAny();
  return { name, description, scopes };
}
