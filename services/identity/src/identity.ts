import { createAccess, type IdentityDeps } from "./use-cases/access.js";
import { accountUseCases } from "./use-cases/accounts.js";
import { apiKeyUseCases } from "./use-cases/api-keys.js";
import { authorizationUseCases } from "./use-cases/authorization.js";
import { invitationUseCases } from "./use-cases/invitations.js";
import { memberUseCases } from "./use-cases/members.js";
import { organizationUseCases } from "./use-cases/organizations.js";
import { roleUseCases } from "./use-cases/roles.js";
import { samlSettingsUseCases } from "./use-cases/saml-settings.js";
import { samlSignInUseCases } from "./use-cases/saml-sign-in.js";
import { scimGroupUseCases } from "./use-cases/scim-groups.js";
import { scimMembership } from "./use-cases/scim-membership.js";
import { scimTokenUseCases } from "./use-cases/scim-tokens.js";
import { scimUserUseCases } from "./use-cases/scim-users.js";

export type { IdentityDeps } from "./use-cases/access.js";
export type { Authorization, SetupCheck } from "./use-cases/authorization.js";
export { settingsOf } from "./use-cases/organizations.js";

export type Identity = ReturnType<typeof createIdentity>;

/** The identity use cases. Every method scopes its reads by the caller's organization access. */
export function createIdentity(deps: IdentityDeps) {
  const access = createAccess(deps);
  const { join, ...members } = memberUseCases(access);
  const invitations = invitationUseCases(access, join);
  const provisioned = scimMembership(access, join);
  const saml = samlSettingsUseCases(access);
  return {
    ...organizationUseCases(access),
    ...members,
    ...invitations,
    ...accountUseCases(access, invitations),
    ...apiKeyUseCases(access),
    ...roleUseCases(access),
    ...authorizationUseCases(access),
    ...scimTokenUseCases(access),
    ...scimUserUseCases(access, provisioned),
    ...scimGroupUseCases(access, provisioned),
    ...saml,
    ...samlSignInUseCases(access, join, saml.samlProvider),
  };
}
