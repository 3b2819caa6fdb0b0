import { type FieldIssue, invalidArgument } from "@kiln/kit/errors";
import { isApiKeyScope } from "./api-keys.js";

export const AI_PLATFORM_PERMISSION = "ai_platform";

/** What onboarding gives a new organization: the Free plan, with AI enabled (docs/concepts.md "Onboarding"). */
export const FREE_PLAN = { plan: "free" as const, entitlements: { aiEnabled: true, monthlyRunLimit: 1_000 } };

/** The permissions of each role; every role may use the AI platform. */
export const ROLE_PERMISSIONS = {
  owner: [AI_PLATFORM_PERMISSION, "manage_api_keys", "manage_members"],
  admin: [AI_PLATFORM_PERMISSION, "manage_api_keys"],
  member: [AI_PLATFORM_PERMISSION],
} as const;

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
  throwIfAny(message = "invalid request"): void {
    if (this.issues.length > 0) throw invalidArgument(message, this.issues);
  }
}

export function normalizeEmail(issues: Issues, email: string): string {
  const e = email.trim().toLowerCase();
  if (!EMAIL.test(e) || e.length > 254) issues.add("email", "must be an e-mail address");
  return e;
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
