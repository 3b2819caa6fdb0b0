import { alreadyExists, notFound } from "@kiln/kit/errors";
import { newId } from "@kiln/kit/ids";
import { type Filter, isDuplicateKeyError } from "@kiln/kit/store";
import { Issues } from "../domain/rules.js";
import type { ScimGroupDoc, ScimUserDoc } from "../store/scim-store.js";
import type { Access } from "./access.js";
import type { scimMembership } from "./scim-membership.js";
import { SCIM_MAX_RESULTS } from "./scim-users.js";

export interface ScimGroupInput {
  displayName: string;
  externalId: string;
  memberIds: string[];
}

const MAX_MEMBERS = 10_000;

const taken = () =>
  alreadyExists("a group with this displayName exists", [{ field: "displayName", issue: "is taken" }]);

/** A group with its members' provisioned records (their userName is the members' `display`). */
export type ScimGroupView = ScimGroupDoc & { members: ScimUserDoc[] };

/** Groups pushed by the organization's identity provider; their names map to roles (docs/scim.md). */
export function scimGroupUseCases(access: Access, membership: ReturnType<typeof scimMembership>) {
  const { c, now } = access;

  /** The input checked; every member must be a user provisioned in the organization. */
  async function checked(organizationId: string, input: ScimGroupInput) {
    const issues = new Issues();
    const displayName = issues.text("displayName", input.displayName);
    const externalId = issues.text("externalId", input.externalId, { min: 0 });
    const memberIds = [...new Set(input.memberIds)];
    if (memberIds.length > MAX_MEMBERS) issues.add("members", `must hold at most ${MAX_MEMBERS} members`);
    issues.throwIfAny("invalid group");
    const found = await c.scimUsers.find({
      organizationId,
      _id: { $in: memberIds.map((id) => `${organizationId}:${id}`) },
    });
    const known = new Set(found.map((u) => u.userId));
    memberIds.forEach((id, i) => {
      if (!known.has(id)) issues.add(`members[${i}].value`, "is not a user provisioned in this organization");
    });
    issues.throwIfAny("invalid group");
    return { displayName, displayNameKey: displayName.toLowerCase(), externalId, memberIds, members: found };
  }

  async function withMembers(organizationId: string, groups: ScimGroupDoc[]): Promise<ScimGroupView[]> {
    const ids = [...new Set(groups.flatMap((g) => g.memberIds))];
    const users =
      ids.length > 0
        ? await c.scimUsers.find({ organizationId, _id: { $in: ids.map((id) => `${organizationId}:${id}`) } })
        : [];
    const byId = new Map(users.map((u) => [u.userId, u]));
    return groups.map((g) => ({ ...g, members: g.memberIds.flatMap((id) => byId.get(id) ?? []) }));
  }

  async function group(organizationId: string, id: string): Promise<ScimGroupDoc> {
    const doc = await c.scimGroups.findOne({ _id: id, organizationId });
    if (!doc) throw notFound("group");
    return doc;
  }

  /** The roles of everyone whose groups changed, given again from their groups. */
  async function syncRoles(organizationId: string, userIds: Iterable<string>) {
    for (const userId of new Set(userIds)) await membership.syncRole(organizationId, userId);
  }

  return {
    async createScimGroup(organizationId: string, input: ScimGroupInput): Promise<ScimGroupView> {
      const { members, ...fields } = await checked(organizationId, input);
      const at = now();
      const doc: ScimGroupDoc = { _id: newId("grp"), organizationId, ...fields, createdAt: at, updatedAt: at };
      try {
        await c.scimGroups.insertOne(doc);
      } catch (e) {
        throw isDuplicateKeyError(e) ? taken() : e;
      }
      await syncRoles(organizationId, doc.memberIds);
      return { ...doc, members };
    },

    async getScimGroup(organizationId: string, id: string): Promise<ScimGroupView> {
      const [view] = await withMembers(organizationId, [await group(organizationId, id)]);
      if (!view) throw notFound("group");
      return view;
    },

    async listScimGroups(
      organizationId: string,
      filter: { displayName: string; externalId: string; startIndex: number; count: number },
    ) {
      const query: Filter = { organizationId };
      if (filter.displayName) query.displayNameKey = filter.displayName.trim().toLowerCase();
      if (filter.externalId) query.externalId = filter.externalId;
      const totalResults = await c.scimGroups.countDocuments(query);
      const count = Math.min(Math.max(filter.count, 0), SCIM_MAX_RESULTS);
      const docs =
        count === 0
          ? []
          : await c.scimGroups.find(query, {
              sort: { _id: 1 },
              skip: Math.max(filter.startIndex, 1) - 1,
              limit: count,
            });
      return { groups: await withMembers(organizationId, docs), totalResults };
    },

    /** Replaces name and members; the roles of members who came, went or stayed are given again. */
    async replaceScimGroup(organizationId: string, id: string, input: ScimGroupInput): Promise<ScimGroupView> {
      const before = await group(organizationId, id);
      const { members, ...fields } = await checked(organizationId, input);
      const doc: ScimGroupDoc = { ...before, ...fields, updatedAt: now() };
      try {
        await c.scimGroups.replaceOne({ _id: id, organizationId }, doc);
      } catch (e) {
        throw isDuplicateKeyError(e) ? taken() : e;
      }
      await syncRoles(organizationId, [...before.memberIds, ...doc.memberIds]);
      return { ...doc, members };
    },

    async deleteScimGroup(organizationId: string, id: string): Promise<void> {
      const before = await group(organizationId, id);
      await c.scimGroups.deleteOne({ _id: id, organizationId });
      await syncRoles(organizationId, before.memberIds);
    },
  };
}
