import type { IdentityAuth } from "@kiln/kit/authorizer";
import { DomainError, invalidArgument, notFound } from "@kiln/kit/errors";
import type { Principal } from "@kiln/kit/principal";

/** API-key scopes of the catalog's route families (api.md "Scopes per route"). */
export const SCOPES = {
  promptsRead: "prompts:read",
  promptsWrite: "prompts:write",
  toolsRead: "tools:read",
  toolsWrite: "tools:write",
  skillsRead: "skills:read",
  skillsWrite: "skills:write",
  agentsRead: "agents:read",
  agentsWrite: "agents:write",
  /** The resolve calls the execution service makes for a run (api.md: "runs:write (execute anything)"). */
  runsWrite: "runs:write",
} as const;

export type Scope = (typeof SCOPES)[keyof typeof SCOPES];

/** Every catalog call is authorized here, against the organization it acts in. */
export interface Access {
  /** Create and list calls: `organizationId` comes from the request (400 when empty). */
  inOrganization(principal: Principal, organizationId: string, scope: Scope): Promise<void>;
  /**
   * Calls addressed by id: the organization is the resource's. A resource of an organization the
   * caller cannot see is reported as the resource not being found (api.md "Organization scoping").
   */
  onResource(principal: Principal, organizationId: string, scope: Scope, what: string): Promise<void>;
}

export function createAccess(identityAuth: IdentityAuth): Access {
  const authorize = (principal: Principal, organizationId: string, scope: Scope) =>
    identityAuth.authorize(principal, { organizationId, requireAi: true, scope });
  return {
    async inOrganization(principal, organizationId, scope) {
      if (organizationId === "")
        throw invalidArgument("organizationId is required", [{ field: "organizationId", issue: "is required" }]);
      await authorize(principal, organizationId, scope);
    },
    async onResource(principal, organizationId, scope, what) {
      // A key sees only its own organization's resources: another's do not exist for it (404),
      // where identity would answer "key of another organization" (403) for a create or list.
      if (principal.type === "api_key" && principal.organizationId !== organizationId) throw notFound(what);
      try {
        await authorize(principal, organizationId, scope);
      } catch (e) {
        if (e instanceof DomainError && e.kind === "not_found") throw notFound(what);
        throw e;
      }
    },
  };
}
