import { DEFAULT_PROTECTED_LABELS, labelNameIssue } from "@kiln/contracts/labels";
import { alreadyExists, DomainError, notFound, permissionDenied, unauthenticated } from "@kiln/kit/errors";
import { newId } from "@kiln/kit/ids";
import { findPage, type Page } from "@kiln/kit/pagination";
import { isOutside, type Principal } from "@kiln/kit/principal";
import { isDuplicateKeyError } from "@kiln/kit/store";
import { generateApiKey, parseApiKey, secretMatches } from "./domain/api-keys.js";
import { hashPassword, verifyPassword } from "./domain/passwords.js";
import {
  AI_PLATFORM_PERMISSION,
  checkPassword,
  checkScopes,
  FREE_PLAN,
  Issues,
  normalizeEmail,
  ROLE_PERMISSIONS,
} from "./domain/rules.js";
import type { TokenIssuer } from "./domain/token-issuer.js";
import type {
  ApiKeyDoc,
  IdentityCollections,
  MembershipDoc,
  OrganizationDoc,
  Role,
  UserDoc,
} from "./store/identity-store.js";

/** The settings in force: an organization created before settings existed has the defaults. */
export function settingsOf(organization: OrganizationDoc) {
  return { protectedLabels: organization.settings?.protectedLabels ?? [...DEFAULT_PROTECTED_LABELS] };
}

const ROLES: readonly Role[] = ["owner", "admin", "member"];
const MAX_PROTECTED_LABELS = 20;

export interface IdentityDeps {
  collections: IdentityCollections;
  issuer: TokenIssuer;
  now?: () => Date;
}

export interface Authorization {
  organization: OrganizationDoc;
  membership: MembershipDoc | null;
}

export interface SetupCheck {
  name: "authentication" | "organization" | "ai_entitlement" | "ai_permission";
  ok: boolean;
  message: string;
}

export type Identity = ReturnType<typeof createIdentity>;

async function ignoreDuplicate(write: () => Promise<unknown>): Promise<void> {
  try {
    await write();
  } catch (e) {
    if (!isDuplicateKeyError(e)) throw e;
  }
}

// A password check costs the same whether or not the address exists (made on first use).
let dummyHash: Promise<string> | undefined;
const dummyPasswordHash = () => {
  dummyHash ??= hashPassword("not-a-real-password");
  return dummyHash;
};

/** The identity use cases. Every method scopes its reads by the caller's organization access. */
export function createIdentity(deps: IdentityDeps) {
  const c = deps.collections;
  const now = deps.now ?? (() => new Date());

  async function getUser(userId: string): Promise<UserDoc> {
    const user = await c.users.findOne({ _id: userId });
    if (!user) throw unauthenticated("unknown user");
    return user;
  }

  async function membershipOf(organizationId: string, userId: string): Promise<MembershipDoc | null> {
    return c.memberships.findOne({ _id: `${organizationId}:${userId}` });
  }

  /** Org and membership, or not_found for both a missing org and a non-member (no leak). */
  async function memberAccess(userId: string, organizationId: string) {
    const [organization, membership] = await Promise.all([
      c.organizations.findOne({ _id: organizationId }),
      membershipOf(organizationId, userId),
    ]);
    if (!organization || !membership) throw notFound("organization");
    return { organization, membership };
  }

  async function activeKey(keyId: string): Promise<ApiKeyDoc> {
    const key = await c.apiKeys.findOne({ _id: keyId });
    if (!key || key.revokedAt) throw unauthenticated("invalid API key");
    return key;
  }

  /** Idempotent; a concurrent call that created the same document first is not an error. */
  async function ensureOrganization(orgId: string, name: string, userId: string, at: Date) {
    await ignoreDuplicate(() =>
      c.organizations.updateOne(
        { _id: orgId },
        { $setOnInsert: { name, ...FREE_PLAN, createdAt: at, updatedAt: at } },
        { upsert: true },
      ),
    );
    await ignoreDuplicate(() =>
      c.memberships.updateOne(
        { _id: `${orgId}:${userId}` },
        {
          $setOnInsert: {
            organizationId: orgId,
            userId,
            role: "owner",
            permissions: [...ROLE_PERMISSIONS.owner],
            createdAt: at,
          },
        },
        { upsert: true },
      ),
    );
  }

  async function manageableKeyOrg(userId: string, organizationId: string) {
    const { organization, membership } = await memberAccess(userId, organizationId);
    if (membership.role !== "owner" && membership.role !== "admin") {
      throw permissionDenied("only organization owners and admins manage API keys");
    }
    return organization;
  }

  async function managedOrganization(userId: string, organizationId: string, what: string) {
    const access = await memberAccess(userId, organizationId);
    if (access.membership.role !== "owner" && access.membership.role !== "admin") {
      throw permissionDenied(`only organization owners and admins ${what}`);
    }
    return access;
  }

  /** Members (any role) see their organization; an API key sees its own. */
  async function visibleOrganization(principal: Principal, organizationId: string) {
    if (principal.type === "user") return memberAccess(principal.id, organizationId);
    if (principal.type === "api_key") await activeKey(principal.id);
    const organization = await c.organizations.findOne({ _id: organizationId });
    if (!organization || isOutside(principal, organizationId)) throw notFound("organization");
    return { organization, membership: null };
  }

  async function withUsers(memberships: MembershipDoc[]) {
    const users = memberships.length > 0 ? await c.users.find({ _id: { $in: memberships.map((m) => m.userId) } }) : [];
    const byId = new Map(users.map((u) => [u._id, u]));
    return memberships.flatMap((membership) => {
      const user = byId.get(membership.userId);
      return user ? [{ membership, user }] : [];
    });
  }

  return {
    async getOrganization(principal: Principal, organizationId: string) {
      if (organizationId === "") throw notFound("organization");
      return visibleOrganization(principal, organizationId);
    },

    /** Name and settings; owners and admins only. */
    async updateOrganization(
      userId: string,
      input: { organizationId: string; name?: string; protectedLabels?: string[] },
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

    /** Adds a signed-up user; owners and admins add members and admins, only owners add owners. */
    async addMember(userId: string, input: { organizationId: string; email: string; role: string }) {
      const issues = new Issues();
      const email = normalizeEmail(issues, input.email);
      const role = input.role as Role;
      if (!ROLES.includes(role)) issues.add("role", 'must be "owner", "admin" or "member"');
      issues.throwIfAny();
      const { membership: mine } = await managedOrganization(userId, input.organizationId, "add members");
      if (role === "owner" && mine.role !== "owner") throw permissionDenied("only owners add owners");
      const user = await c.users.findOne({ email });
      if (!user) throw notFound("user (they sign up first)");
      const membership: MembershipDoc = {
        _id: `${input.organizationId}:${user._id}`,
        organizationId: input.organizationId,
        userId: user._id,
        role,
        permissions: [...ROLE_PERMISSIONS[role]],
        createdAt: now(),
      };
      try {
        await c.memberships.insertOne(membership);
      } catch (e) {
        if (!isDuplicateKeyError(e)) throw e;
        throw alreadyExists(`${email} is already a member`, [{ field: "email", issue: "is already a member" }]);
      }
      return { membership, user };
    },

    /** Members see who else is a member, with their roles. */
    async listMembers(principal: Principal, input: { organizationId: string; limit: number; cursor: string }) {
      if (principal.type !== "user") throw permissionDenied("this call needs a signed-in user");
      await memberAccess(principal.id, input.organizationId);
      const page = await findPage(c.memberships, { organizationId: input.organizationId }, input);
      return { items: await withUsers(page.items), nextCursor: page.nextCursor };
    },

    async signUp(input: { email: string; password: string; fullName: string }) {
      const issues = new Issues();
      const email = normalizeEmail(issues, input.email);
      checkPassword(issues, input.password);
      const fullName = issues.text("fullName", input.fullName, { min: 0 });
      issues.throwIfAny();
      if (await c.passwordLogins.findOne({ _id: email })) {
        throw alreadyExists("an account with this e-mail address exists", [{ field: "email", issue: "is taken" }]);
      }
      const at = now();
      const user: UserDoc = { _id: newId("usr"), email, fullName, createdAt: at, updatedAt: at };
      const passwordHash = await hashPassword(input.password);
      await c.users.insertOne(user);
      try {
        await c.passwordLogins.insertOne({ _id: email, userId: user._id, passwordHash, createdAt: at });
      } catch (e) {
        await c.users.deleteOne({ _id: user._id });
        if (isDuplicateKeyError(e)) {
          throw alreadyExists("an account with this e-mail address exists", [{ field: "email", issue: "is taken" }]);
        }
        throw e;
      }
      return { user, ...(await deps.issuer.issue(user._id)) };
    },

    async issueToken(input: { email: string; password: string }) {
      const login = await c.passwordLogins.findOne({ _id: input.email.trim().toLowerCase() });
      const ok = await verifyPassword(input.password, login?.passwordHash ?? (await dummyPasswordHash()));
      if (!login || !ok) throw unauthenticated("wrong e-mail address or password");
      return deps.issuer.issue(login.userId);
    },

    /** An unknown external subject becomes a user on first sight (api.md "Authentication"). */
    async resolveExternalUser(input: { issuer: string; subject: string; email: string; fullName: string }) {
      const issues = new Issues();
      issues.text("issuer", input.issuer, { max: 1000 });
      issues.text("subject", input.subject, { max: 1000 });
      issues.throwIfAny();
      const loginId = `${input.issuer} ${input.subject}`;
      const existing = await c.externalLogins.findOne({ _id: loginId });
      if (existing) return getUser(existing.userId);
      const at = now();
      const user: UserDoc = {
        _id: newId("usr"),
        email: input.email.trim().toLowerCase(),
        fullName: input.fullName.trim(),
        createdAt: at,
        updatedAt: at,
      };
      await c.users.insertOne(user);
      try {
        await c.externalLogins.insertOne({ _id: loginId, userId: user._id, createdAt: at });
        return user;
      } catch (e) {
        // Another request saw the same subject first: use its user.
        await c.users.deleteOne({ _id: user._id });
        if (!isDuplicateKeyError(e)) throw e;
        const winner = await c.externalLogins.findOne({ _id: loginId });
        if (!winner) throw e;
        return getUser(winner.userId);
      }
    },

    /**
     * Idempotent per user: the onboarding record (keyed by user id) is written first, so a repeat
     * or a concurrent call finds it and returns the same organization, and a call that crashed
     * half-way is completed by the next one.
     */
    async completeOnboarding(userId: string, input: { fullName: string; organizationName: string }) {
      const issues = new Issues();
      const fullName = issues.text("fullName", input.fullName);
      const organizationName = issues.text("organizationName", input.organizationName);
      issues.throwIfAny();
      let user = await getUser(userId);
      const at = now();
      let created = false;
      let record = await c.onboardings.findOne({ _id: userId });
      if (!record) {
        const candidate = { _id: userId, organizationId: newId("org"), organizationName, createdAt: at };
        try {
          await c.onboardings.insertOne(candidate);
          record = candidate;
          created = true;
        } catch (e) {
          if (!isDuplicateKeyError(e)) throw e;
          record = await c.onboardings.findOne({ _id: userId });
        }
      }
      if (!record) throw new Error("onboarding record vanished");
      await ensureOrganization(record.organizationId, record.organizationName, userId, record.createdAt);
      if (created && user.fullName !== fullName) {
        await c.users.updateOne({ _id: userId }, { $set: { fullName, updatedAt: at } });
        user = { ...user, fullName, updatedAt: at };
      }
      const { organization, membership } = await memberAccess(userId, record.organizationId);
      return { user, organization, membership, created };
    },

    async createApiKey(userId: string, input: { organizationId: string; name: string; scopes: string[] }) {
      const issues = new Issues();
      const name = issues.text("name", input.name);
      const scopes = checkScopes(issues, input.scopes);
      issues.throwIfAny();
      await manageableKeyOrg(userId, input.organizationId);
      const id = newId("key");
      const { key, secretHash } = generateApiKey(id);
      const doc: ApiKeyDoc = {
        _id: id,
        organizationId: input.organizationId,
        name,
        scopes,
        secretHash,
        createdByUserId: userId,
        createdAt: now(),
        revokedAt: null,
      };
      await c.apiKeys.insertOne(doc);
      return { apiKey: doc, key };
    },

    async listApiKeys(userId: string, input: { organizationId: string; limit: number; cursor: string }) {
      await manageableKeyOrg(userId, input.organizationId);
      return findPage(c.apiKeys, { organizationId: input.organizationId }, input) as Promise<Page<ApiKeyDoc>>;
    },

    async revokeApiKey(userId: string, keyId: string) {
      const key = await c.apiKeys.findOne({ _id: keyId });
      if (!key) throw notFound("API key");
      // A key of an organization the caller cannot manage does not exist for them.
      try {
        await manageableKeyOrg(userId, key.organizationId);
      } catch (e) {
        if (e instanceof DomainError && e.kind === "not_found") throw notFound("API key");
        throw e;
      }
      return (
        (await c.apiKeys.findOneAndUpdate(
          { _id: keyId, revokedAt: null },
          { $set: { revokedAt: now() } },
          { returnDocument: "after" },
        )) ?? key
      );
    },

    async verifyApiKey(key: string): Promise<Principal> {
      const parsed = parseApiKey(key);
      if (!parsed) throw unauthenticated("invalid API key");
      const doc = await activeKey(parsed.keyId);
      if (!secretMatches(parsed.secret, doc.secretHash)) throw unauthenticated("invalid API key");
      return { type: "api_key", id: doc._id, organizationId: doc.organizationId, scopes: doc.scopes };
    },

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
