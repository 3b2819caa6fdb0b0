import type { Role } from "./rules.js";

/**
 * The SCIM groups that give an organization role (docs/scim.md "Groups and roles"), by lower-cased
 * display name. A provisioned member's role is the highest their groups give, `member` without one;
 * SCIM never gives or takes the owner role, which stays the organization's own decision.
 */
export const GROUP_ROLES: Readonly<Record<string, Exclude<Role, "owner">>> = {
  "kiln-admins": "admin",
  "kiln-members": "member",
};

const RANK: Record<Role, number> = { member: 0, admin: 1, owner: 2 };

/** The role the groups named `groupNames` give: the highest of their mapped roles, else `member`. */
export function roleOfGroups(groupNames: readonly string[]): Exclude<Role, "owner"> {
  let role: Exclude<Role, "owner"> = "member";
  for (const name of groupNames) {
    const mapped = GROUP_ROLES[name.trim().toLowerCase()];
    if (mapped && RANK[mapped] > RANK[role]) role = mapped;
  }
  return role;
}
