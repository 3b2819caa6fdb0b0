import { tokensPerMinuteIssue } from "@kiln/contracts/token-limits";
import { type FieldIssue, invalidArgument } from "@kiln/kit/errors";
import { isApiKeyScope } from "./api-keys.js";

export const AI_PLATFORM_PERMISSION = "ai_platform";

/** What onboarding gives a new organization: the Free plan, with AI enabled (docs/concepts.md "Onboarding"). */
export const FREE_PLAN = { plan: "free" as const, entitlements: { aiEnabled: true, monthlyRunLimit: 1_000 } };

/** The Free plan a new organization gets, with the operator's monthly run limit if one is set (0: none). */
export const freePlanOf = (monthlyRunLimit: number = FREE_PLAN.entitlements.monthlyRunLimit) => ({
  plan: FREE_PLAN.plan,
  entitlements: { ...FREE_PLAN.entitlements, monthlyRunLimit },
});

/** The permissions of each built-in role; every role may use the AI platform. */
export const ROLE_PERMISSIONS = {
  owner: [AI_PLATFORM_PERMISSION, "manage_api_keys", "manage_members"],
  admin: [AI_PLATFORM_PERMISSION, "manage_api_keys"],
  member: [AI_PLATFORM_PERMISSION],
  viewer: [AI_PLATFORM_PERMISSION],
} as const;

export type BuiltInRole = keyof typeof ROLE_PERMISSIONS;
/** A built-in role, or the name of one of the organization's custom roles (domain/roles.ts). */
export type Role = string;
export const ROLES: readonly BuiltInRole[] = ["owner", "admin", "member", "viewer"];
export const isBuiltInRole = (role: string): role is BuiltInRole => (ROLES as readonly string[]).includes(role);

/** A membership's permissions: its built-in role's; a custom role's are those of a member. */
export const permissionsOf = (role: Role): string[] => [
  ...(isBuiltInRole(role) ? ROLE_PERMISSIONS[role] : ROLE_PERMISSIONS.member),
];

/** A custom role's name: lowercase letters, digits and dashes, starting with a letter; never a built-in's. */
export const CUSTOM_ROLE_NAME = /^[a-z][a-z0-9-]{1,39}$/;

/** Rank for "who may give which role": owner above admin above every other role. */
export const roleRank = (role: Role) => (role === "owner" ? 2 : role === "admin" ? 1 : 0);

/**
 * Why a manager with role `actor` may not move a member from role `from` to role `to` (null: in
 * or out of the organization); undefined when they may. Owners and admins manage members; only
 * owners give, change or take away the owner role (api.md "Members").
 */
export function roleChangeRefusal(actor: Role, from: Role | null, to: Role | null): string | undefined {
  if (actor !== "owner" && actor !== "admin") return "only organization owners and admins manage members";
  if (actor !== "owner" && (from === "owner" || to === "owner")) return "only owners add, change or remove owners";
  return undefined;
}

// Deliberately loose: one "@", something on both sides, a dot in the domain, no spaces.
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** Collects field issues and throws them together as one invalid_argument. */
export class Issues {
  private readonly issues: FieldIssue[] = [];
  add(field: string, issue: string): this {
    this.issues.push({ field, issue });
    return this;
  }
  text(field: string, value: string, { min = 1, max = 200 }: { min?: number; max?: number } = {}): string {
    const v = value.trim();
    if (v.length < min) this.add(field, min === 1 ? "is required" : `must be at least ${min} characters`);
    else if (v.length > max) this.add(field, `must be at most ${max} characters`);
    return v;
  }
  isEmpty(): boolean {
    return this.issues.length === 0;
  }
  throwIfAny(message = "invalid request"): void {
    if (this.issues.length > 0) throw invalidArgument(message, this.issues);
  }
}

export function normalizeEmail(issues: Issues, email: string): string {
  const e = email.trim().toLowerCase();
  if (!EMAIL.test(e) || e.length > 254) issues.add("email", "must be an e-mail address");
  return e;
}

/** The role's shape: a built-in role or a custom role's name (whether the custom role exists is asked after). */
export function checkRole(issues: Issues, role: string): Role {
  if (!isBuiltInRole(role) && !CUSTOM_ROLE_NAME.test(role))
    issues.add("role", 'must be "owner", "admin", "member", "viewer" or a custom role of the organization');
  return role;
}

export function checkPassword(issues: Issues, password: string): void {
  if (password.length < 8) issues.add("password", "must be at least 8 characters");
  else if (password.length > 256) issues.add("password", "must be at most 256 characters");
}

export function checkScopes(issues: Issues, scopes: string[]): string[] {
  if (scopes.length === 0) issues.add("scopes", "must name at least one scope");
  scopes.forEach((s, i) => {
    if (!isApiKeyScope(s)) issues.add(`scopes[${i}]`, `unknown scope "${s}"`);
  });
  return [...new Set(scopes)];
}

/** An API key's token-per-minute limit (docs/usage.md "Token-per-minute limits"); undefined: none. */
export function checkTokensPerMinute(issues: Issues, value: number | undefined): number | undefined {
  if (value === undefined) return undefined;
  const issue = tokensPerMinuteIssue(value);
  if (issue) issues.add("tokensPerMinute", issue);
  return value;
}
