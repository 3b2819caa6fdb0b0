import { DEFAULT_PROTECTED_LABELS } from "@kiln/contracts/labels";
import { authorizeOnResource, type IdentityAuth } from "@kiln/kit/authorizer";
import { invalidArgument, permissionDenied } from "@kiln/kit/errors";
import type { Principal } from "@kiln/kit/principal";
import type { AuthorizeResponse } from "@kiln/proto/identity";

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
  /** Moving a label (API keys; users act with their membership, owners and admins for protected labels). */
  labelsWrite: "labels:write",
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
  /** As `onResource`, answering the organization's protected labels. */
  protectedLabels(principal: Principal, organizationId: string, scope: Scope, what: string): Promise<string[]>;
  /**
   * As `onResource`, and a user moving one of the organization's protected labels (publishing
   * moves `production`) must be an owner or admin: permission_denied otherwise. API keys act with
   * their scopes (only owners and admins create keys).
   */
  moveLabel(principal: Principal, organizationId: string, scope: Scope, what: string, label: string): Promise<void>;
}

export function createAccess(identityAuth: IdentityAuth): Access {
  const authorize = (principal: Principal, organizationId: string, scope: Scope) =>
    identityAuth.authorize(principal, { organizationId, requireAi: true, scope });
  const onResource = (principal: Principal, organizationId: string, scope: Scope, what: string) =>
    authorizeOnResource(identityAuth, principal, { organizationId, scope, what });
  return {
    async inOrganization(principal, organizationId, scope) {
      if (organizationId === "")
        throw invalidArgument("organizationId is required", [{ field: "organizationId", issue: "is required" }]);
      await authorize(principal, organizationId, scope);
    },
    async onResource(principal, organizationId, scope, what) {
      await onResource(principal, organizationId, scope, what);
    },
    async protectedLabels(principal, organizationId, scope, what) {
      return protectedOf(await onResource(principal, organizationId, scope, what));
    },
    async moveLabel(principal, organizationId, scope, what, label) {
      const decision = await onResource(principal, organizationId, scope, what);
      if (
        principal.type === "user" &&
        protectedOf(decision).includes(label) &&
        decision.role !== "owner" &&
        decision.role !== "admin"
      ) {
        throw permissionDenied(`the label ${label} is protected: only organization owners and admins move it`);
      }
    },
  };
}

function protectedOf(decision: AuthorizeResponse): string[] {
  // An identity older than organization settings answers none: the defaults apply.
  return decision.organization?.settings?.protectedLabels ?? [...DEFAULT_PROTECTED_LABELS];
}
