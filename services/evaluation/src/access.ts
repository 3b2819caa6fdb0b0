import { type CallOptions, type Client, createContextValues } from "@connectrpc/connect";
import { authorizeOnResource, type IdentityAuth } from "@kiln/kit/authorizer";
import { DomainError, invalidArgument, notFound } from "@kiln/kit/errors";
import { actingFor, kPrincipal, type Principal } from "@kiln/kit/principal";
import { domainErrorOf } from "@kiln/kit/rpc/errors";
import type { CatalogService, Skill } from "@kiln/proto/catalog";

/** API-key scopes of the evaluation routes (api.md "Scopes per route"). */
export const SCOPES = {
  evaluationsRead: "evaluations:read",
  evaluationsWrite: "evaluations:write",
} as const;

export type Scope = (typeof SCOPES)[keyof typeof SCOPES];

/** The catalog calls the evaluation service makes. */
export type CatalogClient = Pick<Client<typeof CatalogService>, "getSkill" | "listLabels" | "getImport">;

/** Every evaluation call is authorized here, against the organization of the skill it addresses. */
export interface Access {
  /**
   * The skill `skillId` as the caller may see it with `scope`: a skill of another organization
   * than `organizationId` (when given), or of one the caller cannot see, is not found.
   */
  skill(principal: Principal, organizationId: string, skillId: string, scope: Scope): Promise<Skill>;
  /** The skill at `versionId` (its top-level schemas describe that version), read in its organization. */
  skillVersion(organizationId: string, skillId: string, versionId: string): Promise<Skill>;
  /** The skill's labels (docs/labels.md): label → version id. */
  skillLabels(organizationId: string, skillId: string): Promise<Map<string, string>>;
  /** Where a catalog import stands (applying, applied, committed, undone, unknown): asked as this service. */
  importStatus(organizationId: string, importId: string): Promise<string>;
  /** Authorizes `scope` in the organization of a resource; one the caller cannot see is `what` not found. */
  onResource(principal: Principal, organizationId: string, scope: Scope, what: string): Promise<void>;
}

/** The name the evaluation service signs its own calls with. */
export const EVALUATION_SERVICE = "evaluation";

/** Call options of a call the evaluation service makes for itself in one organization. */
export const inOrganization = (organizationId: string) => ({
  contextValues: actingFor(EVALUATION_SERVICE, organizationId),
});

export async function remoteCall<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (e) {
    throw e instanceof DomainError ? e : (domainErrorOf(e) ?? e);
  }
}

/**
 * The catalog is asked as the evaluation service acting in the skill's organization (a token that
 * reads nothing elsewhere), after the caller was authorized here for the evaluation scope: an API
 * key holding `evaluations:write` alone may evaluate a skill (docs/concepts.md "What an evaluation key may do") although the catalog
 * would refuse it `skills:read`. A user naming no organization is the one case where the
 * organization is not known before the skill is read: that lookup is made as the user, whose
 * memberships the catalog checks.
 */
export function createAccess(identityAuth: IdentityAuth, catalog: CatalogClient): Access {
  async function getSkill(skillId: string, versionId: string, options: CallOptions): Promise<Skill> {
    if (skillId === "") throw invalidArgument("skillId is required", [{ field: "skillId", issue: "is required" }]);
    const res = await remoteCall(catalog.getSkill({ id: skillId, versionId }, options));
    if (!res.skill) throw new Error("catalog returned no skill");
    return res.skill;
  }

  async function onResource(principal: Principal, organizationId: string, scope: Scope, what: string) {
    await authorizeOnResource(identityAuth, principal, { organizationId, scope, what });
  }

  return {
    async skill(principal, organizationId, skillId, scope) {
      const known = organizationId || (principal.type === "user" ? "" : (principal.organizationId ?? ""));
      if (known === "") {
        const skill = await getSkill(skillId, "", { contextValues: createContextValues().set(kPrincipal, principal) });
        await onResource(principal, skill.organizationId, scope, "skill");
        return skill;
      }
      // The caller is authorized in the organization before this service acts there for it.
      if (skillId === "") throw invalidArgument("skillId is required", [{ field: "skillId", issue: "is required" }]);
      await onResource(principal, known, scope, "skill");
      const skill = await getSkill(skillId, "", inOrganization(known));
      if (skill.organizationId !== known) throw notFound("skill");
      return skill;
    },
    skillVersion: (organizationId, skillId, versionId) => getSkill(skillId, versionId, inOrganization(organizationId)),
    async skillLabels(organizationId, skillId) {
      const res = await remoteCall(
        catalog.listLabels({ kind: "skill", parentId: skillId }, inOrganization(organizationId)),
      );
      return new Map(res.labels.map((l) => [l.label, l.versionId]));
    },
    async importStatus(organizationId, importId) {
      return (await remoteCall(catalog.getImport({ organizationId, importId }, inOrganization(organizationId)))).status;
    },
    onResource,
  };
}
