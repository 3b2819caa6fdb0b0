import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ConnectRouter } from "@connectrpc/connect";
import type { JsonText } from "@kiln/kit/json-text";
import { type Principal, principalOf } from "@kiln/kit/principal";
import { IdentityService } from "@kiln/proto/identity";
import { invitationStatus } from "../domain/invitations.js";
import { type Identity, settingsOf } from "../identity.js";
import type { ApiKeyDoc, InvitationDoc, MembershipDoc, OrganizationDoc, UserDoc } from "../store/identity-store.js";
import type { RoleView } from "../use-cases/roles.js";
import { requirePlatform, requireUser } from "./callers.js";

const userToProto = (u: UserDoc) => ({
  id: u._id,
  email: u.email,
  fullName: u.fullName,
  createdAt: timestampFromDate(u.createdAt),
});

const organizationToProto = (o: OrganizationDoc) => ({
  id: o._id,
  name: o.name,
  plan: o.plan,
  entitlements: { aiEnabled: o.entitlements.aiEnabled, monthlyRunLimit: BigInt(o.entitlements.monthlyRunLimit) },
  createdAt: timestampFromDate(o.createdAt),
  settings: settingsOf(o),
});

const membershipToProto = (m: MembershipDoc) => ({
  organizationId: m.organizationId,
  userId: m.userId,
  role: m.role,
  permissions: m.permissions,
  createdAt: timestampFromDate(m.createdAt),
});

const memberToProto = (m: { membership: MembershipDoc; user: UserDoc }) => ({
  membership: membershipToProto(m.membership),
  user: userToProto(m.user),
});

const apiKeyToProto = (k: ApiKeyDoc) => ({
  id: k._id,
  organizationId: k.organizationId,
  name: k.name,
  scopes: k.scopes,
  createdByUserId: k.createdByUserId,
  createdAt: timestampFromDate(k.createdAt),
  revokedAt: k.revokedAt ? timestampFromDate(k.revokedAt) : undefined,
  tokensPerMinute: k.tokensPerMinute ?? undefined,
});

const invitationToProto = (i: InvitationDoc) => ({
  id: i._id,
  organizationId: i.organizationId,
  email: i.email,
  role: i.role,
  createdByUserId: i.createdByUserId,
  createdAt: timestampFromDate(i.createdAt),
  expiresAt: timestampFromDate(i.expiresAt),
  status: invitationStatus(i, new Date()),
});

const roleToProto = (r: RoleView) => ({
  name: r.name,
  description: r.description,
  scopes: r.scopes ? [...r.scopes] : [],
  allScopes: r.scopes === null,
  builtIn: r.builtIn,
  createdAt: r.createdAt ? timestampFromDate(r.createdAt) : undefined,
  updatedAt: r.updatedAt ? timestampFromDate(r.updatedAt) : undefined,
});

const principalToProto = (p: Principal) => ({
  type: p.type,
  id: p.id,
  organizationId: p.type === "user" ? "" : (p.organizationId ?? ""),
  scopes: p.type === "api_key" ? p.scopes : [],
  tokensPerMinute: p.type === "api_key" ? p.tokensPerMinute : undefined,
});

export function registerIdentityRpc(
  router: ConnectRouter,
  identity: Identity,
  jwks: () => { jwks: JsonText; issuer: string; audience: string },
): void {
  router.service(IdentityService, {
    async signUp(req, ctx) {
      requirePlatform(ctx);
      const r = await identity.signUp(req);
      return {
        user: userToProto(r.user),
        accessToken: r.accessToken,
        expiresAt: timestampFromDate(r.expiresAt),
        membership: r.membership ? membershipToProto(r.membership) : undefined,
      };
    },
    async issueToken(req, ctx) {
      requirePlatform(ctx);
      const r = await identity.issueToken(req);
      return { accessToken: r.accessToken, expiresAt: timestampFromDate(r.expiresAt) };
    },
    async getJwks(_req, ctx) {
      requirePlatform(ctx);
      return jwks();
    },
    async resolveExternalUser(req, ctx) {
      requirePlatform(ctx);
      return { user: userToProto(await identity.resolveExternalUser(req)) };
    },
    async completeOnboarding(req, ctx) {
      const r = await identity.completeOnboarding(requireUser(ctx), req);
      return {
        user: userToProto(r.user),
        organization: organizationToProto(r.organization),
        membership: membershipToProto(r.membership),
        created: r.created,
      };
    },
    async createApiKey(req, ctx) {
      const r = await identity.createApiKey(requireUser(ctx), req);
      return { apiKey: apiKeyToProto(r.apiKey), key: r.key };
    },
    async listApiKeys(req, ctx) {
      const page = await identity.listApiKeys(requireUser(ctx), req);
      return { apiKeys: page.items.map(apiKeyToProto), nextCursor: page.nextCursor };
    },
    async updateApiKey(req, ctx) {
      const change = req.setTokensPerMinute ? { tokensPerMinute: req.tokensPerMinute ?? null } : {};
      return { apiKey: apiKeyToProto(await identity.updateApiKey(requireUser(ctx), req.id, change)) };
    },
    async revokeApiKey(req, ctx) {
      return { apiKey: apiKeyToProto(await identity.revokeApiKey(requireUser(ctx), req.id)) };
    },
    async verifyApiKey(req, ctx) {
      requirePlatform(ctx);
      return { principal: principalToProto(await identity.verifyApiKey(req.key)) };
    },
    async authorize(req, ctx) {
      const r = await identity.authorize(principalOf(ctx), req);
      return {
        organization: organizationToProto(r.organization),
        role: r.membership?.role ?? "",
        permissions: r.membership?.permissions ?? [],
      };
    },
    async getOrganization(req, ctx) {
      const r = await identity.getOrganization(principalOf(ctx), req.organizationId);
      return {
        organization: organizationToProto(r.organization),
        membership: r.membership ? membershipToProto(r.membership) : undefined,
      };
    },
    async updateOrganization(req, ctx) {
      const organization = await identity.updateOrganization(requireUser(ctx), {
        organizationId: req.organizationId,
        name: req.name,
        protectedLabels: req.setProtectedLabels ? req.protectedLabels : undefined,
        auditRetentionDays: req.auditRetentionDays,
      });
      return { organization: organizationToProto(organization) };
    },
    async setOrganizationPlan(req, ctx) {
      const organization = await identity.setOrganizationPlan(principalOf(ctx), {
        organizationId: req.organizationId,
        plan: req.plan,
        monthlyRunLimit: req.monthlyRunLimit === undefined ? undefined : Number(req.monthlyRunLimit),
        aiEnabled: req.aiEnabled,
      });
      return { organization: organizationToProto(organization) };
    },
    async addMember(req, ctx) {
      return { member: memberToProto(await identity.addMember(requireUser(ctx), req)) };
    },
    async listMembers(req, ctx) {
      const page = await identity.listMembers(principalOf(ctx), req);
      return { members: page.items.map(memberToProto), nextCursor: page.nextCursor };
    },
    async listMyOrganizations(req, ctx) {
      const page = await identity.listMyOrganizations(principalOf(ctx), req);
      const organizations = page.items.map((r) => ({
        organization: organizationToProto(r.organization),
        membership: membershipToProto(r.membership),
      }));
      return { organizations, nextCursor: page.nextCursor };
    },
    async getMe(_req, ctx) {
      return { user: userToProto(await identity.getUser(requireUser(ctx))) };
    },
    async createOrganization(req, ctx) {
      const r = await identity.createOrganization(requireUser(ctx), req);
      return { organization: organizationToProto(r.organization), membership: membershipToProto(r.membership) };
    },
    async changeMemberRole(req, ctx) {
      return { member: memberToProto(await identity.changeMemberRole(requireUser(ctx), req)) };
    },
    async removeMember(req, ctx) {
      return { member: memberToProto(await identity.removeMember(requireUser(ctx), req)) };
    },
    async createInvitation(req, ctx) {
      const r = await identity.createInvitation(requireUser(ctx), req);
      return { invitation: invitationToProto(r.invitation), token: r.token };
    },
    async listInvitations(req, ctx) {
      const page = await identity.listInvitations(requireUser(ctx), req);
      return { invitations: page.items.map(invitationToProto), nextCursor: page.nextCursor };
    },
    async revokeInvitation(req, ctx) {
      return { invitation: invitationToProto(await identity.revokeInvitation(requireUser(ctx), req)) };
    },
    async acceptInvitation(req, ctx) {
      const r = await identity.acceptInvitation(requireUser(ctx), req.token);
      return { organization: organizationToProto(r.organization), membership: membershipToProto(r.membership) };
    },
    async listRoles(req, ctx) {
      return { roles: (await identity.listRoles(requireUser(ctx), req)).map(roleToProto) };
    },
    async createRole(req, ctx) {
      return { role: roleToProto(await identity.createRole(requireUser(ctx), req)) };
    },
    async updateRole(req, ctx) {
      const change = {
        organizationId: req.organizationId,
        name: req.name,
        description: req.description,
        scopes: req.setScopes ? req.scopes : undefined,
      };
      return { role: roleToProto(await identity.updateRole(requireUser(ctx), change)) };
    },
    async deleteRole(req, ctx) {
      return { role: roleToProto(await identity.deleteRole(requireUser(ctx), req)) };
    },
    async verifySetup(req, ctx) {
      const r = await identity.verifySetup(principalOf(ctx), req.organizationId);
      return {
        ok: r.ok,
        principal: principalToProto(r.principal),
        organization: r.organization ? organizationToProto(r.organization) : undefined,
        checks: r.checks,
      };
    },
  });
}
