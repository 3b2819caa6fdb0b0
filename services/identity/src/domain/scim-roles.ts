import { highestMappedRole, type MappedRole } from "./mapped-roles.js";

/**
 * The SCIM groups that give an organization role (docs/scim.md "Groups and roles"), by lower-cased
 * display name. A provisioned member's role is the highest their groups give, `member` without one;
 * SCIM never gives or takes the owner role, which stays the organization's own decision.
 */
export const GROUP_ROLES: Readonly<Record<string, MappedRole>> = {
  "kiln-admins": "admin",
  "kiln-members": "member",
  "kiln-viewers": "viewer",
};

/** The role the groups named `groupNames` give: the highest of their mapped roles, else `member`. */
export function roleOfGroups(groupNames: readonly string[]): MappedRole {
  return highestMappedRole(groupNames, GROUP_ROLES, "member");
}
