import type { Client } from "@connectrpc/connect";
import type { IdentityAuth } from "@kiln/kit/authorizer";
import { DomainError, invalidArgument, notFound } from "@kiln/kit/errors";
import type { Principal } from "@kiln/kit/principal";
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
  /** The skill at `versionId` (its top-level schemas describe that version). */
  skillVersion(skillId: string, versionId: string): Promise<Skill>;
  /** The skill's labels (docs/labels.md): label → version id. */
  skillLabels(skillId: string): Promise<Map<string, string>>;
  /** Where a catalog import stands (applying, applied, committed, undone, unknown): asked as this service. */
  importStatus(organizationId: string, importId: string): Promise<string>;
  /** Authorizes `scope` in the organization of a resource; one the caller cannot see is `what` not found. */
  onResource(principal: Principal, organizationId: string, scope: Scope, what: string): Promise<void>;
}

/**
 * The catalog is asked as the evaluation service itself (the call options carry no principal, so
 * the forward interceptor signs as "evaluation"), after the caller was authorized here for the
 * evaluation scope: an API key holding `evaluations:write` alone may evaluate a skill (spec §5.4)
 * although the catalog would refuse it `skills:read`.
 */
export function createAccess(identityAuth: IdentityAuth, catalog: CatalogClient): Access {
  async function getSkill(skillId: string, versionId: string): Promise<Skill> {
    if (skillId === "") throw invalidArgument("skillId is required", [{ field: "skillId", issue: "is required" }]);
    try {
      const res = await catalog.getSkill({ id: skillId, versionId });
      if (!res.skill) throw new Error("catalog returned no skill");
      return res.skill;
    } catch (e) {
      throw e instanceof DomainError ? e : (domainErrorOf(e) ?? e);
    }
  }

  async function onResource(principal: Principal, organizationId: string, scope: Scope, what: string) {
    // A key sees only its own organization's resources: another's do not exist for it (404).
    if (principal.type === "api_key" && principal.organizationId !== organizationId) throw notFound(what);
    try {
      await identityAuth.authorize(principal, { organizationId, requireAi: true, scope });
    } catch (e) {
      if (e instanceof DomainError && e.kind === "not_found") throw notFound(what);
      throw e;
    }
  }

  return {
    async skill(principal, organizationId, skillId, scope) {
      const skill = await getSkill(skillId, "");
      if (organizationId !== "" && organizationId !== skill.organizationId) throw notFound("skill");
      await onResource(principal, skill.organizationId, scope, "skill");
      return skill;
    },
    skillVersion: getSkill,
    async skillLabels(skillId) {
      try {
        const res = await catalog.listLabels({ kind: "skill", parentId: skillId });
        return new Map(res.labels.map((l) => [l.label, l.versionId]));
      } catch (e) {
        throw e instanceof DomainError ? e : (domainErrorOf(e) ?? e);
      }
    },
    async importStatus(organizationId, importId) {
      try {
        return (await catalog.getImport({ organizationId, importId })).status;
      } catch (e) {
        throw e instanceof DomainError ? e : (domainErrorOf(e) ?? e);
      }
    },
    onResource,
  };
}
