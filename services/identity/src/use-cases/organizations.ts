import {
  DEFAULT_AUDIT_RETENTION_DAYS,
  MAX_AUDIT_RETENTION_DAYS,
  MIN_AUDIT_RETENTION_DAYS,
} from "@kiln/contracts/audit";
import { DEFAULT_PROTECTED_LABELS, labelNameIssue } from "@kiln/contracts/labels";
import { notFound, permissionDenied } from "@kiln/kit/errors";
import { newId } from "@kiln/kit/ids";
import { findPage } from "@kiln/kit/pagination";
import type { Principal } from "@kiln/kit/principal";
import { Issues } from "../domain/rules.js";
import type { MembershipDoc, OrganizationDoc } from "../store/identity-store.js";
import type { Access } from "./access.js";

/** The settings in force: an organization created before settings existed has the defaults. */
export function settingsOf(organization: OrganizationDoc) {
  return {
    protectedLabels: organization.settings?.protectedLabels ?? [...DEFAULT_PROTECTED_LABELS],
    auditRetentionDays: organization.settings?.auditRetentionDays ?? DEFAULT_AUDIT_RETENTION_DAYS,
  };
}

const MAX_PROTECTED_LABELS = 20;

/** Organizations: reading them, their settings, and listing their members. */
export function organizationUseCases(access: Access) {
  const { c, now, getUser, memberAccess, managedOrganization, visibleOrganization, ensureOrganization } = access;

  async function withUsers(memberships: MembershipDoc[]) {
    const users = memberships.length > 0 ? await c.users.find({ _id: { $in: memberships.map((m) => m.userId) } }) : [];
    const byId = new Map(users.map((u) => [u._id, u]));
    return memberships.flatMap((membership) => {
      const user = byId.get(membership.userId);
      return user ? [{ membership, user }] : [];
    });
  }

  return {
    /** The signed-in user themselves (the console's user menu). */
    getUser,

    async getOrganization(principal: Principal, organizationId: string) {
      if (organizationId === "") throw notFound("organization");
      return visibleOrganization(principal, organizationId);
    },

    /** Name and settings; owners and admins only. */
    async updateOrganization(
      userId: string,
      input: { organizationId: string; name?: string; protectedLabels?: string[]; auditRetentionDays?: number },
    ): Promise<OrganizationDoc> {
      const issues = new Issues();
      const set: Record<string, unknown> = {};
      if (input.name !== undefined) set.name = issues.text("name", input.name);
      if (input.protectedLabels !== undefined) {
        if (input.protectedLabels.length > MAX_PROTECTED_LABELS)
          issues.add("settings.protectedLabels", `must hold at most ${MAX_PROTECTED_LABELS} labels`);
        input.protectedLabels.forEach((label, i) => {
          const issue = labelNameIssue(label);
          if (issue) issues.add(`settings.protectedLabels[${i}]`, issue);
        });
        set["settings.protectedLabels"] = [...new Set(input.protectedLabels)];
      }
      if (input.auditRetentionDays !== undefined) {
        const days = input.auditRetentionDays;
        if (!Number.isInteger(days) || days < MIN_AUDIT_RETENTION_DAYS || days > MAX_AUDIT_RETENTION_DAYS)
          issues.add(
            "settings.auditRetentionDays",
            `must be a whole number of days from ${MIN_AUDIT_RETENTION_DAYS} to ${MAX_AUDIT_RETENTION_DAYS}`,
          );
        set["settings.auditRetentionDays"] = days;
      }
      issues.throwIfAny();
      const { organization } = await managedOrganization(userId, input.organizationId, "change its settings");
      if (Object.keys(set).length === 0) return organization;
      return (
        (await c.organizations.findOneAndUpdate(
          { _id: organization._id },
          { $set: { ...set, updatedAt: now() } },
          { returnDocument: "after" },
        )) ?? organization
      );
    },

    /**
     * The operator sets an organization's plan and limits (docs/operations.md "Plans"): only the
     * platform service principal (an internal token acting for no organization) may.
     */
    async setOrganizationPlan(
      principal: Principal,
      input: { organizationId: string; plan: string; monthlyRunLimit?: number; aiEnabled?: boolean },
    ): Promise<OrganizationDoc> {
      if (principal.type !== "service" || principal.organizationId !== undefined) {
        throw permissionDenied("only the platform operator sets an organization's plan");
      }
      const issues = new Issues();
      const set: Record<string, unknown> = { updatedAt: now() };
      if (input.plan !== "") set.plan = issues.text("plan", input.plan);
      if (input.monthlyRunLimit !== undefined) {
        if (!Number.isSafeInteger(input.monthlyRunLimit) || input.monthlyRunLimit < 0)
          issues.add("monthlyRunLimit", "must be a whole number, 0 or more (0: unlimited)");
        set["entitlements.monthlyRunLimit"] = input.monthlyRunLimit;
      }
      if (input.aiEnabled !== undefined) set["entitlements.aiEnabled"] = input.aiEnabled;
      issues.throwIfAny();
      const updated = await c.organizations.findOneAndUpdate(
        { _id: input.organizationId },
        { $set: set },
        { returnDocument: "after" },
      );
      if (!updated) throw notFound("organization");
      return updated;
    },

    /**
     * The caller's organizations with their membership, newest organizations first (a membership's
     * id starts with its organization's): only ever the caller's own, whoever asks.
     */
    async listMyOrganizations(principal: Principal, input: { limit: number; cursor: string }) {
      if (principal.type !== "user") throw permissionDenied("this call needs a signed-in user");
      const page = await findPage(c.memberships, { userId: principal.id }, input);
      const ids = page.items.map((m) => m.organizationId);
      const organizations = ids.length > 0 ? await c.organizations.find({ _id: { $in: ids } }) : [];
      const byId = new Map(organizations.map((o) => [o._id, o]));
      const items = page.items.flatMap((membership) => {
        const organization = byId.get(membership.organizationId);
        return organization ? [{ organization, membership }] : [];
      });
      return { items, nextCursor: page.nextCursor };
    },

    /**
     * Another organization for a signed-in user (onboarding makes their first), on the Free plan,
     * with them as its owner.
     */
    async createOrganization(userId: string, input: { name: string }) {
      const issues = new Issues();
      const name = issues.text("name", input.name);
      issues.throwIfAny();
      const organizationId = newId("org");
      await ensureOrganization(organizationId, name, userId, now());
      return memberAccess(userId, organizationId);
    },

    /** Members see who else is a member, with their roles. */
    async listMembers(principal: Principal, input: { organizationId: string; limit: number; cursor: string }) {
      if (principal.type !== "user") throw permissionDenied("this call needs a signed-in user");
      await memberAccess(principal.id, input.organizationId);
      const page = await findPage(c.memberships, { organizationId: input.organizationId }, input);
      return { items: await withUsers(page.items), nextCursor: page.nextCursor };
    },
  };
}
