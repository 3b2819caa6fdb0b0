import { notFound, permissionDenied } from "@kiln/kit/errors";
import { isOutside, type Principal } from "@kiln/kit/principal";
import { AI_PLATFORM_PERMISSION } from "../domain/rules.js";
import type { MembershipDoc, OrganizationDoc } from "../store/identity-store.js";
import type { Access } from "./access.js";

export interface Authorization {
  organization: OrganizationDoc;
  membership: MembershipDoc | null;
}

export interface SetupCheck {
  name: "authentication" | "organization" | "ai_entitlement" | "ai_permission";
  ok: boolean;
  message: string;
}

/** Whether a principal may act in an organization, and the setup check that explains it. */
export function authorizationUseCases(access: Access) {
  const { c, activeKey, memberAccess, membershipOf, requireRoleScope } = access;

  return {
    /**
     * May `principal` act in `organizationId`? not_found when the organization does not exist or
     * the user is no member; permission_denied for a missing entitlement, permission or scope, or
     * a key of another organization (api.md "Organization scoping").
     */
    async authorize(
      principal: Principal,
      input: { organizationId: string; requireAi: boolean; scope: string },
    ): Promise<Authorization> {
      // A revoked key stops working here as soon as it is revoked, whatever it asks about.
      if (principal.type === "api_key") await activeKey(principal.id);
      if (principal.type === "user") {
        const { organization, membership } = await memberAccess(principal.id, input.organizationId);
        if (input.requireAi && !organization.entitlements.aiEnabled) {
          throw permissionDenied("AI is not enabled for this organization");
        }
        if (input.requireAi && !membership.permissions.includes(AI_PLATFORM_PERMISSION)) {
          throw permissionDenied("you do not have the ai_platform permission in this organization");
        }
        await requireRoleScope(membership, input.scope);
        return { organization, membership };
      }
      const organization = await c.organizations.findOne({ _id: input.organizationId });
      if (!organization) throw notFound("organization");
      if (principal.type === "api_key") {
        if (principal.organizationId !== input.organizationId) {
          throw permissionDenied("this API key belongs to another organization");
        }
        if (input.scope && !principal.scopes.includes(input.scope)) {
          throw permissionDenied(`this API key lacks the scope ${input.scope}`);
        }
      } else if (isOutside(principal, input.organizationId)) {
        // A service acts for the one organization its token names; the platform principal for none.
        throw permissionDenied(
          principal.organizationId === undefined
            ? "this service token acts for no organization"
            : "this service token acts for another organization",
        );
      }
      if (input.requireAi && !organization.entitlements.aiEnabled) {
        throw permissionDenied("AI is not enabled for this organization");
      }
      return { organization, membership: null };
    },

    /** POST /api/setup/verify: the checks, each with its own verdict; bad credentials never get here. */
    async verifySetup(principal: Principal, organizationId: string) {
      if (principal.type === "api_key") await activeKey(principal.id);
      const checks: SetupCheck[] = [
        { name: "authentication", ok: true, message: `authenticated as ${principal.type}` },
      ];
      let organization: OrganizationDoc | null = null;
      let membership: MembershipDoc | null = null;
      let orgId = organizationId;
      if (!orgId && principal.type !== "user") orgId = principal.organizationId ?? "";
      if (!orgId && principal.type === "user") {
        const [first] = await c.memberships.find({ userId: principal.id }, { sort: { createdAt: 1 }, limit: 1 });
        orgId = first?.organizationId ?? "";
      }
      if (!orgId) {
        checks.push({ name: "organization", ok: false, message: "no organization: complete onboarding first" });
      } else if (isOutside(principal, orgId)) {
        const who = principal.type === "api_key" ? "API key belongs to" : "service token acts for";
        checks.push({ name: "organization", ok: false, message: `this ${who} another organization` });
      } else {
        organization = await c.organizations.findOne({ _id: orgId });
        if (organization && principal.type === "user") membership = await membershipOf(orgId, principal.id);
        const visible = organization !== null && (principal.type !== "user" || membership !== null);
        if (!visible) organization = null;
        checks.push(
          visible
            ? { name: "organization", ok: true, message: `organization ${orgId}` }
            : { name: "organization", ok: false, message: "organization not found or not a member" },
        );
      }
      if (organization) {
        const entitled = organization.entitlements.aiEnabled;
        checks.push({
          name: "ai_entitlement",
          ok: entitled,
          message: entitled ? "AI is enabled" : "AI is not enabled for this organization",
        });
        const permitted =
          principal.type !== "user" || (membership?.permissions.includes(AI_PLATFORM_PERMISSION) ?? false);
        checks.push({
          name: "ai_permission",
          ok: permitted,
          message:
            principal.type === "api_key"
              ? "API keys act with their scopes"
              : permitted
                ? "ai_platform permission granted"
                : "missing the ai_platform permission",
        });
      }
      return { ok: checks.every((ch) => ch.ok), principal, organization, checks };
    },
  };
}
