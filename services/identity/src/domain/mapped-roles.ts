import type { Role } from "./rules.js";

/**
 * The role an identity provider's values give (docs/scim.md "Groups and roles", docs/security.md
 * "SAML sign-in"): SCIM's group names and a SAML role attribute's values are looked up the same
 * way, trimmed and lower-cased, and the highest role any of them maps to wins. An identity
 * provider never gives the owner role: that stays the organization's own decision.
 */
export type MappedRole = Exclude<Role, "owner">;

const RANK: Record<string, number> = { viewer: 0, member: 1, admin: 2, owner: 3 };
const rankOf = (role: Role) => RANK[role] ?? 0;

/** The key a value is looked up by: trimmed and lower-cased. */
export const mappingKey = (value: string) => value.trim().toLowerCase();

/** The highest role `mapping` (lower-cased keys) gives any of `values`; `fallback` when none maps. */
export function highestMappedRole(
  values: readonly string[],
  mapping: Readonly<Record<string, MappedRole>>,
  fallback: MappedRole,
): MappedRole {
  let role: MappedRole | undefined;
  for (const value of values) {
    const mapped = Object.hasOwn(mapping, mappingKey(value)) ? mapping[mappingKey(value)] : undefined;
    if (mapped && (role === undefined || rankOf(mapped) > rankOf(role))) role = mapped;
  }
  return role ?? fallback;
}
