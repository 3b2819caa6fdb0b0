import { useState } from "react";
import { Field } from "./ui.js";

/**
 * "Sign in with SSO" on the sign-in page (docs/security.md "SAML sign-in"): the organization's id
 * sends the browser to its SAML login, which goes to the organization's identity provider and
 * comes back signed in (the session cookie), on the prompts. The id is checked here only for its
 * form; the gateway answers an organization without SAML sign-in with a page saying so.
 */
const ORGANIZATION_ID = /^org_[0-9a-f]{32}$/;

export function SsoSignIn() {
  const [organizationId, setOrganizationId] = useState("");
  const [issue, setIssue] = useState<string | undefined>(undefined);
  const go = (e: React.FormEvent) => {
    e.preventDefault();
    const id = organizationId.trim();
    if (!ORGANIZATION_ID.test(id)) {
      setIssue("an organization id looks like org_ followed by 32 hex digits");
      return;
    }
    location.assign(`/saml/${id}/login?returnTo=${encodeURIComponent("/prompts")}`);
  };
  return (
    <section aria-labelledby="sso-heading">
      <h2 id="sso-heading">Sign in with SSO</h2>
      <p className="hint">Your organization signs you in through its identity provider (SAML).</p>
      <form onSubmit={go} noValidate>
        <Field label="Organization id" value={organizationId} onChange={setOrganizationId} issue={issue} required />
        <button type="submit" className="secondary">
          Continue with SSO
        </button>
      </form>
    </section>
  );
}
