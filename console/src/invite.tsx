import type { AcceptedInvitation } from "@kiln/sdk";
import { useState } from "react";
import { useAction } from "./action.js";
import { call, rememberOrganization, type Session } from "./api.js";
import { SignIn, SignUp } from "./auth.js";
import type { Navigate } from "./router.js";
import { ErrorBox } from "./ui.js";

/** The invitation's token: the fragment of /invite#<token> (never sent to a server, docs/security.md "Invitations"). */
export const invitationTokenOf = (hash: string) => decodeURIComponent(hash.replace(/^#/, ""));

/**
 * /invite#<token>, the link an owner or admin sent (docs/console.md "Invitations"): signed out, sign
 * up (joining at once) or sign in, then join; signed in, join. Then the organization's console.
 */
export function AcceptInvitation({
  token,
  session,
  onSession,
  navigate,
}: {
  token: string;
  session: Session | null;
  onSession: (s: Session | null) => void;
  navigate: Navigate;
}) {
  const [form, setForm] = useState<"signup" | "signin">("signup");
  const { error, act, busy } = useAction();
  if (!token) {
    return (
      <main className="narrow">
        <h1>Join an organization</h1>
        <p role="alert">This invitation link is incomplete: ask for the link again and open all of it.</p>
      </main>
    );
  }
  if (!session) {
    const props = { onSession, navigate };
    return form === "signup" ? (
      <SignUp {...props} invitationToken={token} onSwitch={() => setForm("signin")} />
    ) : (
      <SignIn {...props} onSwitch={() => setForm("signup")} />
    );
  }
  const join = () =>
    act(async () => {
      const r = await call<AcceptedInvitation>("POST", "/api/invitations/accept", { token });
      rememberOrganization(r.organization.id);
      onSession({ ...session, organizationId: r.organization.id, organizationName: r.organization.name });
      navigate("/prompts");
    });
  const signOut = () =>
    act(async () => {
      await call("DELETE", "/api/session");
      onSession(null);
    });
  return (
    <main className="narrow">
      <h1>Join an organization</h1>
      <p>You have been invited to an organization on Kiln. Joining gives you the role the invitation names.</p>
      <ErrorBox error={error} />
      <div className="actions">
        <button type="button" disabled={busy} onClick={join}>
          {busy ? "Joining…" : "Join the organization"}
        </button>
        <button type="button" className="secondary" disabled={busy} onClick={signOut}>
          Use another account
        </button>
      </div>
    </main>
  );
}
