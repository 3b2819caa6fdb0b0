import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ConnectRouter, HandlerContext } from "@connectrpc/connect";
import { ScimService, type ScimUserInput } from "@kiln/proto/scim";
import type { Identity } from "../identity.js";
import type { ScimTokenDoc } from "../store/scim-store.js";
import type { ScimGroupView } from "../use-cases/scim-groups.js";
import type { ScimUserView } from "../use-cases/scim-users.js";
import { requirePlatform, requireUser } from "./callers.js";

const scimTokenToProto = (t: ScimTokenDoc) => ({
  id: t._id,
  organizationId: t.organizationId,
  name: t.name,
  createdByUserId: t.createdByUserId,
  createdAt: timestampFromDate(t.createdAt),
  revokedAt: t.revokedAt ? timestampFromDate(t.revokedAt) : undefined,
});

const scimUserToProto = (u: ScimUserView) => ({
  id: u.userId,
  externalId: u.externalId,
  userName: u.userName,
  active: u.active,
  displayName: u.displayName,
  givenName: u.givenName,
  familyName: u.familyName,
  emails: u.emails,
  groups: u.groups.map((g) => ({ id: g._id, displayName: g.displayName })),
  createdAt: timestampFromDate(u.createdAt),
  updatedAt: timestampFromDate(u.updatedAt),
});

const scimGroupToProto = (g: ScimGroupView) => ({
  id: g._id,
  displayName: g.displayName,
  externalId: g.externalId,
  members: g.members.map((m) => ({ id: m.userId, displayName: m.userName })),
  createdAt: timestampFromDate(g.createdAt),
  updatedAt: timestampFromDate(g.updatedAt),
});

const userInput = (u: ScimUserInput | undefined) => ({
  externalId: u?.externalId ?? "",
  userName: u?.userName ?? "",
  active: u?.active ?? false,
  displayName: u?.displayName ?? "",
  givenName: u?.givenName ?? "",
  familyName: u?.familyName ?? "",
  emails: (u?.emails ?? []).map((e) => ({ value: e.value, type: e.type, primary: e.primary })),
});

const groupInput = (g: { displayName: string; externalId: string; memberIds: string[] } | undefined) => ({
  displayName: g?.displayName ?? "",
  externalId: g?.externalId ?? "",
  memberIds: [...(g?.memberIds ?? [])],
});

export function registerScimRpc(router: ConnectRouter, identity: Identity): void {
  /** The organization of the request's SCIM token, for the platform principal only. */
  const orgOf = (req: { token: string }, ctx: HandlerContext) => {
    requirePlatform(ctx, "SCIM calls are");
    return identity.scimOrganizationOf(req.token);
  };

  router.service(ScimService, {
    async createScimToken(req, ctx) {
      const r = await identity.createScimToken(requireUser(ctx), req);
      return { scimToken: scimTokenToProto(r.scimToken), token: r.token };
    },
    async listScimTokens(req, ctx) {
      const page = await identity.listScimTokens(requireUser(ctx), req);
      return { scimTokens: page.items.map(scimTokenToProto), nextCursor: page.nextCursor };
    },
    async revokeScimToken(req, ctx) {
      return { scimToken: scimTokenToProto(await identity.revokeScimToken(requireUser(ctx), req)) };
    },
    async createScimUser(req, ctx) {
      const user = await identity.createScimUser(await orgOf(req, ctx), userInput(req.user));
      return { user: scimUserToProto(user) };
    },
    async getScimUser(req, ctx) {
      return { user: scimUserToProto(await identity.getScimUser(await orgOf(req, ctx), req.id)) };
    },
    async listScimUsers(req, ctx) {
      const r = await identity.listScimUsers(await orgOf(req, ctx), req);
      return { users: r.users.map(scimUserToProto), totalResults: r.totalResults };
    },
    async replaceScimUser(req, ctx) {
      const r = await identity.replaceScimUser(await orgOf(req, ctx), req.id, userInput(req.user));
      return { user: scimUserToProto(r.user), revokedApiKeyIds: r.revokedApiKeyIds };
    },
    async deleteScimUser(req, ctx) {
      return identity.deleteScimUser(await orgOf(req, ctx), req.id);
    },
    async createScimGroup(req, ctx) {
      return { group: scimGroupToProto(await identity.createScimGroup(await orgOf(req, ctx), groupInput(req.group))) };
    },
    async getScimGroup(req, ctx) {
      return { group: scimGroupToProto(await identity.getScimGroup(await orgOf(req, ctx), req.id)) };
    },
    async listScimGroups(req, ctx) {
      const r = await identity.listScimGroups(await orgOf(req, ctx), req);
      return { groups: r.groups.map(scimGroupToProto), totalResults: r.totalResults };
    },
    async replaceScimGroup(req, ctx) {
      const group = await identity.replaceScimGroup(await orgOf(req, ctx), req.id, groupInput(req.group));
      return { group: scimGroupToProto(group) };
    },
    async deleteScimGroup(req, ctx) {
      await identity.deleteScimGroup(await orgOf(req, ctx), req.id);
      return {};
    },
  });
}
