import { type CallOptions, type Client, createContextValues } from "@connectrpc/connect";
import { authorizeOnResource, type IdentityAuth } from "@kiln/kit/authorizer";
import { DomainError, invalidArgument, notFound } from "@kiln/kit/errors";
import { actingFor, kPrincipal, type Principal } from "@kiln/kit/principal";
import { domainErrorOf } from "@kiln/kit/rpc/errors";
import type { CatalogService, Prompt, Skill } from "@kiln/proto/catalog";

/** API-key scopes of the evaluation routes (api.md "Scopes per route"). */
export const SCOPES = {
  evaluationsRead: "evaluations:read",
  evaluationsWrite: "evaluations:write",
} as const;

export type Scope = (typeof SCOPES)[keyof typeof SCOPES];

/** The catalog calls the evaluation service makes. */
export type CatalogClient = Pick<Client<typeof CatalogService>, "getSkill" | "getPrompt" | "listLabels" | "getImport">;

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
  /** The prompt `promptId` as the caller may see it with `scope`, as `skill` reads a skill (its versions listed). */
  prompt(principal: Principal, organizationId: string, promptId: string, scope: Scope): Promise<Prompt>;
  /** The prompt's labels: label → version id. */
  promptLabels(organizationId: string, promptId: string): Promise<Map<string, string>>;
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

  async function getPrompt(promptId: string, options: CallOptions): Promise<Prompt> {
    const res = await remoteCall(catalog.getPrompt({ id: promptId, versionId: "" }, options));
    if (!res.prompt) throw new Error("catalog returned no prompt");
    return res.prompt;
  }

  /**
   * A skill or prompt as the caller may see it: read as the user when it names no organization,
   * else as this service in the organization the caller was first authorized in.
   */
  async function visible<T extends { organizationId: string }>(
    principal: Principal,
    organizationId: string,
    scope: Scope,
    what: "skill" | "prompt",
    read: (options: CallOptions) => Promise<T>,
  ): Promise<T> {
    const known = organizationId || (principal.type === "user" ? "" : (principal.organizationId ?? ""));
    if (known === "") {
      const found = await read({ contextValues: createContextValues().set(kPrincipal, principal) });
      await onResource(principal, found.organizationId, scope, what);
      return found;
    }
    // The caller is authorized in the organization before this service acts there for it.
    await onResource(principal, known, scope, what);
    const found = await read(inOrganization(known));
    if (found.organizationId !== known) throw notFound(what);
    return found;
  }

  async function labelsOf(organizationId: string, kind: "skill" | "prompt", parentId: string) {
    const res = await remoteCall(catalog.listLabels({ kind, parentId }, inOrganization(organizationId)));
    return new Map(res.labels.map((l) => [l.label, l.versionId]));
  }

  async function onResource(principal: Principal, organizationId: string, scope: Scope, what: string) {
    await authorizeOnResource(identityAuth, principal, { organizationId, scope, what });
  }

  return {
    skill(principal, organizationId, skillId, scope) {
      if (skillId === "") throw invalidArgument("skillId is required", [{ field: "skillId", issue: "is required" }]);
      return visible(principal, organizationId, scope, "skill", (options) => getSkill(skillId, "", options));
    },
    skillVersion: (organizationId, skillId, versionId) => getSkill(skillId, versionId, inOrganization(organizationId)),
    skillLabels: (organizationId, skillId) => labelsOf(organizationId, "skill", skillId),
    prompt(principal, organizationId, promptId, scope) {
      if (promptId === "") throw invalidArgument("promptId is required", [{ field: "promptId", issue: "is required" }]);
      return visible(principal, organizationId, scope, "prompt", (options) => getPrompt(promptId, options));
    },
    promptLabels: (organizationId, promptId) => labelsOf(organizationId, "prompt", promptId),
    async importStatus(organizationId, importId) {
      return (await remoteCall(catalog.getImport({ organizationId, importId }, inOrganization(organizationId)))).status;
    },
    onResource,
  };
}
