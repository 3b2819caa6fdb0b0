/**
 * Roles of an organization (docs/security.md "Roles"): the built-in ones, and custom roles made of
 * API-key scopes. Every member reads them; owners and admins create, change and delete custom
 * ones. A role still held by a member, or named by a pending invitation, cannot be deleted; a
 * change of a role's scopes applies to its members' next requests (within the services' brief
 * authorization cache elsewhere).
 */
import { alreadyExists, failedPrecondition, notFound } from "@kiln/kit/errors";
import { isDuplicateKeyError } from "@kiln/kit/store";
import { builtInScopes, type CustomRoleInput, checkCustomRole, MAX_CUSTOM_ROLES } from "../domain/roles.js";
import { ROLES } from "../domain/rules.js";
import type { RoleDoc } from "../store/identity-store.js";
import type { Access } from "./access.js";

/** A role as the API shows it: its scopes (every scope: null), built in or not. */
export interface RoleView {
  name: string;
  description: string;
  scopes: readonly string[] | null;
  builtIn: boolean;
  createdAt: Date | null;
  updatedAt: Date | null;
}

const BUILT_IN_DESCRIPTIONS: Record<(typeof ROLES)[number], string> = {
  owner: "everything, members and API keys included; gives and takes the owner role",
  admin: "everything, members and API keys included, but the owner role",
  member: "every read and change of prompts, tools, skills, agents, runs, evaluations and the rest",
  viewer: "reads everything a member reads (not the audit log); changes and runs nothing",
};

const viewOf = (r: RoleDoc): RoleView => ({
  name: r.name,
  description: r.description,
  scopes: r.scopes,
  builtIn: false,
  createdAt: r.createdAt,
  updatedAt: r.updatedAt,
});

export function roleUseCases(access: Access) {
  const { c, now, memberAccess, managedOrganization } = access;
  const idOf = (organizationId: string, name: string) => `${organizationId}:${name}`;

  async function existing(organizationId: string, name: string): Promise<RoleDoc> {
    const role = await c.roles.findOne({ _id: idOf(organizationId, name), organizationId });
    if (!role) throw notFound("role");
    return role;
  }

  return {
    /** The built-in roles, then the custom ones by name. */
    async listRoles(userId: string, input: { organizationId: string }): Promise<RoleView[]> {
      await memberAccess(userId, input.organizationId);
      const custom = await c.roles.find({ organizationId: input.organizationId }, { sort: { _id: 1 } });
      const builtIn = ROLES.map((name) => ({
        name,
        description: BUILT_IN_DESCRIPTIONS[name],
        scopes: builtInScopes(name),
        builtIn: true,
        createdAt: null,
        updatedAt: null,
      }));
      return [...builtIn, ...custom.map(viewOf)];
    },

    async createRole(userId: string, input: { organizationId: string } & CustomRoleInput): Promise<RoleView> {
      const checked = checkCustomRole(input, true);
      await managedOrganization(userId, input.organizationId, "manage roles");
      if ((await c.roles.countDocuments({ organizationId: input.organizationId })) >= MAX_CUSTOM_ROLES)
        throw failedPrecondition(`an organization keeps at most ${MAX_CUSTOM_ROLES} custom roles`);
      const at = now();
      const role: RoleDoc = {
        _id: idOf(input.organizationId, checked.name),
        organizationId: input.organizationId,
        name: checked.name,
        description: checked.description ?? "",
        scopes: checked.scopes ?? [],
        createdAt: at,
        updatedAt: at,
      };
      try {
        await c.roles.insertOne(role);
      } catch (e) {
        if (!isDuplicateKeyError(e)) throw e;
        throw alreadyExists(`the role ${checked.name} exists`, [{ field: "name", issue: "is taken" }]);
      }
      return viewOf(role);
    },

    async updateRole(
      userId: string,
      input: { organizationId: string; name: string } & Omit<CustomRoleInput, "name">,
    ): Promise<RoleView> {
      const checked = checkCustomRole(input, false);
      await managedOrganization(userId, input.organizationId, "manage roles");
      const role = await existing(input.organizationId, input.name);
      const set: Partial<RoleDoc> = { updatedAt: now() };
      if (checked.description !== undefined) set.description = checked.description;
      if (checked.scopes !== undefined) set.scopes = checked.scopes;
      const changed = await c.roles.findOneAndUpdate({ _id: role._id }, { $set: set }, { returnDocument: "after" });
      if (!changed) throw notFound("role");
      return viewOf(changed);
    },

    async deleteRole(userId: string, input: { organizationId: string; name: string }): Promise<RoleView> {
      await managedOrganization(userId, input.organizationId, "manage roles");
      const role = await existing(input.organizationId, input.name);
      const holders = await c.memberships.countDocuments({ organizationId: input.organizationId, role: role.name });
      const invited = await c.invitations.countDocuments({
        organizationId: input.organizationId,
        role: role.name,
        acceptedAt: null,
        revokedAt: null,
      });
      if (holders > 0 || invited > 0) {
        throw failedPrecondition(
          `the role ${role.name} is held by ${holders} member${holders === 1 ? "" : "s"} and named by ${invited} pending invitation${invited === 1 ? "" : "s"}: give them another role first`,
        );
      }
      await c.roles.deleteOne({ _id: role._id });
      return viewOf(role);
    },
  };
}
