import { type Timestamp, timestampDate } from "@bufbuild/protobuf/wkt";
import { DEFAULT_AUDIT_RETENTION_DAYS } from "@kiln/contracts/audit";
import type { ApiKey, Invitation, Member, Membership, Organization, Principal, User } from "@kiln/proto/identity";
import Type from "typebox";
import { Nullable, OneOf, ref, Timestamp as TimestampSchema } from "../schemas.js";

/** Proto messages → REST JSON (api.md shapes), with their response schemas beside them. */

/** A JSON object (not an array, not null). */
export const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === "object" && !Array.isArray(v);

export const iso = (t: Timestamp | undefined): string | null => (t ? timestampDate(t).toISOString() : null);

/**
 * A message's own fields, without its `$typeName`: for a view that passes most fields through as
 * they are and overrides the few it converts (the response schema serializes only its properties).
 */
export function fieldsOf<M extends { $typeName: string }>(message: M): Omit<M, "$typeName"> {
  const { $typeName: _, ...fields } = message;
  return fields;
}

/**
 * How the gateway reads one service's answers: `present` gives a message the service always sets
 * (proto3 makes every message field optional) or throws naming what is missing; `view` makes a
 * view function of such a message.
 */
export function answersOf(service: string) {
  const present = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`${service} returned no ${what}`);
    return value;
  };
  const view =
    <M, V>(what: string, toView: (m: M) => V) =>
    (m: M | undefined): V =>
      toView(present(m, what));
  return { present, view };
}

export const UserView = Type.Object(
  { id: Type.String(), email: Type.String(), fullName: Type.String() },
  { $id: "User" },
);
export const userView = (u: User | undefined) => ({
  id: u?.id ?? "",
  email: u?.email ?? "",
  fullName: u?.fullName ?? "",
});

export const OrganizationView = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    plan: Type.String({ description: '"free" after onboarding' }),
    entitlements: Type.Object({
      aiEnabled: Type.Boolean(),
      monthlyRunLimit: Type.Integer({ description: "runs per calendar month; 0 means unlimited" }),
    }),
    settings: Type.Object({
      protectedLabels: Type.Array(Type.String(), {
        description: 'labels only owners and admins (or API keys with labels:write) move; default ["production"]',
      }),
      auditRetentionDays: Type.Integer({ description: "days the audit log keeps an entry; default 365" }),
    }),
    createdAt: TimestampSchema,
  },
  { $id: "Organization" },
);
export const organizationView = (o: Organization) => ({
  id: o.id,
  name: o.name,
  plan: o.plan,
  entitlements: {
    aiEnabled: o.entitlements?.aiEnabled ?? false,
    monthlyRunLimit: Number(o.entitlements?.monthlyRunLimit ?? 0n),
  },
  settings: {
    protectedLabels: o.settings?.protectedLabels ?? [],
    auditRetentionDays: o.settings?.auditRetentionDays || DEFAULT_AUDIT_RETENTION_DAYS,
  },
  createdAt: iso(o.createdAt) ?? "",
});

/** A built-in role or a custom role's name (docs/security.md "Roles"). */
export const RoleName = Type.String({
  pattern: "^[a-z][a-z0-9-]{1,39}$",
  description: "owner, admin, member, viewer, or a custom role of the organization (GET /api/organizations/:id/roles)",
});
const ROLE = RoleName;
type Role = "owner" | "admin" | "member";

export const MembershipView = Type.Object(
  {
    organizationId: Type.String(),
    userId: Type.String(),
    role: ROLE,
    permissions: Type.Array(Type.String()),
    createdAt: TimestampSchema,
  },
  { $id: "Membership" },
);
export const membershipView = (m: Membership | undefined) => ({
  organizationId: m?.organizationId ?? "",
  userId: m?.userId ?? "",
  role: (m?.role ?? "member") as Role,
  permissions: m?.permissions ?? [],
  createdAt: iso(m?.createdAt) ?? "",
});

export const MemberView = Type.Object(
  { user: ref(UserView), membership: ref(MembershipView) },
  { $id: "Member", description: "a member of an organization with their role" },
);
export const memberView = (m: Member) => ({ user: userView(m.user), membership: membershipView(m.membership) });

export const InvitationView = Type.Object(
  {
    id: Type.String(),
    organizationId: Type.String(),
    email: Type.String(),
    role: ROLE,
    status: OneOf(["pending", "accepted", "revoked", "expired"]),
    createdByUserId: Type.String(),
    createdAt: TimestampSchema,
    expiresAt: TimestampSchema,
  },
  { $id: "Invitation", description: "an invitation to join an organization with a role; never its token" },
);
export const invitationView = (i: Invitation | undefined) => ({
  id: i?.id ?? "",
  organizationId: i?.organizationId ?? "",
  email: i?.email ?? "",
  role: (i?.role ?? "member") as Role,
  status: (i?.status ?? "pending") as "pending" | "accepted" | "revoked" | "expired",
  createdByUserId: i?.createdByUserId ?? "",
  createdAt: iso(i?.createdAt) ?? "",
  expiresAt: iso(i?.expiresAt) ?? "",
});

export const AcceptedInvitationView = Type.Object(
  { organization: ref(OrganizationView), membership: ref(MembershipView) },
  { $id: "AcceptedInvitation", description: "the organization joined and the new membership" },
);

export const OrganizationMembershipView = Type.Object(
  { organization: ref(OrganizationView), membership: ref(MembershipView) },
  { $id: "OrganizationMembership", description: "an organization of the signed-in user, with their membership" },
);

export const ApiKeyView = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    scopes: Type.Array(Type.String()),
    organizationId: Type.String(),
    createdByUserId: Type.String(),
    createdAt: TimestampSchema,
    revokedAt: Nullable(TimestampSchema),
    tokensPerMinute: Nullable(Type.Integer(), {
      description: "tokens the key's runs may use per minute (docs/usage.md); null: no limit",
    }),
  },
  { $id: "ApiKey" },
);
export const apiKeyView = (k: ApiKey | undefined) => ({
  id: k?.id ?? "",
  name: k?.name ?? "",
  scopes: k?.scopes ?? [],
  organizationId: k?.organizationId ?? "",
  createdByUserId: k?.createdByUserId ?? "",
  createdAt: iso(k?.createdAt) ?? "",
  revokedAt: iso(k?.revokedAt),
  tokensPerMinute: k?.tokensPerMinute ?? null,
});

export const PrincipalView = Type.Object(
  {
    type: OneOf(["user", "api_key"]),
    id: Type.String(),
    scopes: Type.Optional(Type.Array(Type.String(), { description: "an API key's scopes" })),
  },
  { $id: "Principal" },
);
export const principalView = (p: Principal | undefined) =>
  p?.type === "api_key"
    ? { type: "api_key" as const, id: p.id, scopes: p.scopes }
    : { type: "user" as const, id: p?.id ?? "" };

export const OnboardingView = Type.Object(
  { user: ref(UserView), organization: ref(OrganizationView), membership: ref(MembershipView) },
  { $id: "OnboardingResult" },
);

export const SetupCheckView = Type.Object(
  {
    name: OneOf(["authentication", "organization", "ai_entitlement", "ai_permission"]),
    ok: Type.Boolean(),
    message: Type.Optional(Type.String()),
  },
  { $id: "SetupCheck" },
);

export const SetupVerificationView = Type.Object(
  {
    ok: Type.Boolean(),
    principal: ref(PrincipalView),
    organization: Nullable(ref(OrganizationView)),
    checks: Type.Array(ref(SetupCheckView)),
  },
  { $id: "SetupVerification" },
);
