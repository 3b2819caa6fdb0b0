import { alreadyExists, notFound } from "@kiln/kit/errors";
import { newId } from "@kiln/kit/ids";
import { type Filter, isDuplicateKeyError } from "@kiln/kit/store";
import { checkScimUser, type ScimUserInput } from "../domain/scim-users.js";
import type { UserDoc } from "../store/identity-store.js";
import type { ScimGroupDoc, ScimUserDoc } from "../store/scim-store.js";
import type { Access } from "./access.js";
import type { scimMembership } from "./scim-membership.js";

export interface ScimUserFilter {
  userName: string;
  email: string;
  externalId: string;
  active?: boolean;
  startIndex: number;
  count: number;
}

/** How many resources one list answers at most (ServiceProviderConfig's filter.maxResults). */
export const SCIM_MAX_RESULTS = 200;

const taken = () =>
  alreadyExists("a user with this userName is provisioned", [{ field: "userName", issue: "is taken" }]);

/** A provisioned user with the groups that hold them. */
export type ScimUserView = ScimUserDoc & { groups: ScimGroupDoc[] };

/** Users provisioned by the organization's identity provider (docs/scim.md "Users"). */
export function scimUserUseCases(access: Access, membership: ReturnType<typeof scimMembership>) {
  const { c, now } = access;
  const recordId = (organizationId: string, userId: string) => `${organizationId}:${userId}`;

  async function withGroups(organizationId: string, docs: ScimUserDoc[]): Promise<ScimUserView[]> {
    const ids = docs.map((d) => d.userId);
    const groups = ids.length > 0 ? await c.scimGroups.find({ organizationId, memberIds: { $in: ids } }) : [];
    return docs.map((d) => ({ ...d, groups: groups.filter((g) => g.memberIds.includes(d.userId)) }));
  }

  async function record(organizationId: string, userId: string): Promise<ScimUserDoc> {
    const doc = await c.scimUsers.findOne({ _id: recordId(organizationId, userId), organizationId });
    if (!doc) throw notFound("user");
    return doc;
  }

  /** The Kiln user with this e-mail address (as adding a member finds one), or a new one. */
  async function userOf(email: string, fullName: string, at: Date): Promise<UserDoc> {
    const existing = await c.users.findOne({ email });
    if (existing) return existing;
    const user: UserDoc = { _id: newId("usr"), email, fullName, createdAt: at, updatedAt: at };
    await c.users.insertOne(user);
    return user;
  }

  return {
    async createScimUser(organizationId: string, input: ScimUserInput): Promise<ScimUserView> {
      const { email, fullName, ...fields } = checkScimUser(input);
      const at = now();
      const user = await userOf(email, fullName, at);
      const doc: ScimUserDoc = {
        _id: recordId(organizationId, user._id),
        organizationId,
        userId: user._id,
        ...fields,
        roleBeforeDeactivation: null,
        createdAt: at,
        updatedAt: at,
      };
      try {
        await c.scimUsers.insertOne(doc);
      } catch (e) {
        throw isDuplicateKeyError(e) ? taken() : e;
      }
      if (doc.active) await membership.admit(doc);
      return { ...doc, groups: [] };
    },

    async getScimUser(organizationId: string, userId: string): Promise<ScimUserView> {
      const [view] = await withGroups(organizationId, [await record(organizationId, userId)]);
      if (!view) throw notFound("user");
      return view;
    },

    async listScimUsers(organizationId: string, filter: ScimUserFilter) {
      const query: Filter = { organizationId };
      if (filter.userName) query.userNameKey = filter.userName.trim().toLowerCase();
      if (filter.email) query.emailKeys = filter.email.trim().toLowerCase();
      if (filter.externalId) query.externalId = filter.externalId;
      if (filter.active !== undefined) query.active = filter.active;
      const totalResults = await c.scimUsers.countDocuments(query);
      const count = Math.min(Math.max(filter.count, 0), SCIM_MAX_RESULTS);
      const docs =
        count === 0
          ? []
          : await c.scimUsers.find(query, {
              sort: { createdAt: 1, _id: 1 },
              skip: Math.max(filter.startIndex, 1) - 1,
              limit: count,
            });
      return { users: await withGroups(organizationId, docs), totalResults };
    },

    /**
     * Replaces the attributes; `active` turning false ends the member's access at once, turning
     * true gives it back (docs/scim.md "Deactivation"). The Kiln user's own e-mail stays.
     */
    async replaceScimUser(organizationId: string, userId: string, input: ScimUserInput) {
      const { email: _email, fullName: _fullName, ...fields } = checkScimUser(input);
      const before = await record(organizationId, userId);
      let revokedApiKeyIds: string[] = [];
      let roleBeforeDeactivation = before.roleBeforeDeactivation;
      if (before.active && !fields.active) {
        const ended = await membership.deactivate(organizationId, userId);
        revokedApiKeyIds = ended.revokedApiKeyIds;
        roleBeforeDeactivation = ended.role;
      }
      const doc: ScimUserDoc = { ...before, ...fields, roleBeforeDeactivation, updatedAt: now() };
      try {
        await c.scimUsers.replaceOne({ _id: before._id, organizationId }, doc);
      } catch (e) {
        throw isDuplicateKeyError(e) ? taken() : e;
      }
      // Active: a member, even one removed through /api meanwhile (the identity provider decides).
      if (doc.active) await membership.admit(doc);
      const [view] = await withGroups(organizationId, [doc]);
      return { user: view ?? { ...doc, groups: [] }, revokedApiKeyIds };
    },

    /** Deprovisions: the membership and the user's keys in the organization go; the Kiln user stays. */
    async deleteScimUser(organizationId: string, userId: string) {
      const doc = await record(organizationId, userId);
      const { revokedApiKeyIds } = await membership.deactivate(organizationId, userId);
      await c.scimGroups.updateMany({ organizationId, memberIds: userId }, { $pull: { memberIds: userId } });
      await c.scimUsers.deleteOne({ _id: doc._id, organizationId });
      return { revokedApiKeyIds };
    },
  };
}
