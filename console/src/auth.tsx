import type { Membership, OnboardingResult } from "@kiln/sdk";
import { useEffect, useState } from "react";
import { useAction, useFields } from "./action.js";
import { call, clientOf, currentSession, rememberOrganization, type Session } from "./api.js";
import { PlanTerms } from "./organization.js";
import type { Navigate } from "./router.js";
import { SsoSignIn } from "./sso.js";
import { ErrorBox, Field, Link, Loading } from "./ui.js";

/** The other way in, under a sign-up or sign-in form: a link to its page, or (`onSwitch`) the other form here. */
function SwitchLink({
  question,
  to,
  label,
  navigate,
  onSwitch,
}: {
  question: string;
  to: string;
  label: string;
  navigate: Navigate;
  onSwitch?: () => void;
}) {
  return (
    <p>
      {question}{" "}
      {onSwitch ? (
        <button type="button" className="link" onClick={onSwitch}>
          {label}
        </button>
      ) : (
        <Link to={to} navigate={navigate}>
          {label}
        </Link>
      )}
    </p>
  );
}

interface AuthProps {
  onSession: (s: Session) => void;
  navigate: Navigate;
  /** On an invitation's page: the other form is shown in place (the page keeps the invitation). */
  onSwitch?: () => void;
}

/** Sign up (built-in issuer), then onboarding; with an invitation's token, straight into its organization. */
export function SignUp({ onSession, navigate, onSwitch, invitationToken }: AuthProps & { invitationToken?: string }) {
  const { error, submit, busy } = useAction();
  const { values, field } = useFields({ fullName: "", email: "", password: "" }, error);
  const signUp = submit(async () => {
    const r = await call<{ membership?: Membership }>("POST", "/api/auth/signup", { ...values, invitationToken });
    // The account's session is the httpOnly cookie: the token of the sign-up answer is not kept.
    await call("POST", "/api/session", { email: values.email, password: values.password });
    if (r.membership) rememberOrganization(r.membership.organizationId);
    onSession((await currentSession()) ?? {});
    navigate(r.membership ? "/prompts" : "/onboarding");
  });
  return (
    <main className="narrow">
      <h1>{invitationToken ? "Create your account to join" : "Create your Kiln account"}</h1>
      {invitationToken && (
        <p className="hint">
          You are invited to an organization on Kiln: sign up with the e-mail address the invitation was sent to.
        </p>
      )}
      <form onSubmit={signUp} noValidate>
        <Field label="Full name" {...field("fullName")} />
        <Field label="Email" type="email" {...field("email")} autoComplete="email" required />
        <Field label="Password" type="password" {...field("password")} autoComplete="new-password" required />
        <ErrorBox error={error} shownFields={["fullName", "email", "password"]} />
        <button type="submit" disabled={busy}>
          {busy ? "Creating…" : "Sign up"}
        </button>
      </form>
      <SwitchLink question="Have an account?" to="/signin" label="Sign in" navigate={navigate} onSwitch={onSwitch} />
    </main>
  );
}

export function SignIn({ onSession, navigate, onSwitch }: AuthProps) {
  const { error, submit, busy } = useAction();
  // Sign-in names no field: what the API says shows above the button.
  const { values, field } = useFields({ email: "", password: "" }, null);
  const signIn = submit(async () => {
    await call("POST", "/api/session", values);
    // An onboarded user goes straight on: to the page they opened, else to their prompts.
    const session = (await currentSession()) ?? {};
    onSession(session);
    const opened = location.pathname;
    // On an invitation's page, the page goes on (it accepts the invitation).
    if (onSwitch) return;
    if (!session.organizationId) navigate("/onboarding");
    else if (opened === "/" || opened === "/signin" || opened === "/signup") navigate("/prompts");
  });
  return (
    <main className="narrow">
      <h1>Sign in to Kiln</h1>
      <form onSubmit={signIn} noValidate>
        <Field label="Email" type="email" {...field("email")} autoComplete="email" required />
        <Field label="Password" type="password" {...field("password")} autoComplete="current-password" required />
        <ErrorBox error={error} />
        <button type="submit" disabled={busy}>
          {busy ? "Signing in…" : "Sign in"}
        </button>
      </form>
      <SwitchLink question="New here?" to="/signup" label="Create an account" navigate={navigate} onSwitch={onSwitch} />
      {!onSwitch && <SsoSignIn />}
    </main>
  );
}

const PLACES = [
  { path: "/playground", name: "Playground", what: "run a prompt and see tokens, cost and latency" },
  { path: "/models", name: "Models", what: "the models you can call and their prices" },
  { path: "/members", name: "Members", what: "invite your team and choose their roles" },
  { path: "/usage", name: "Billing", what: "your plan, what it has used and what your runs cost" },
];

/** docs/concepts.md "Onboarding": create the workspace, review the Free plan, choose where to start. */
export function Onboarding({
  session,
  onSession,
  navigate,
}: {
  session: Session;
  onSession: (s: Session) => void;
  navigate: Navigate;
}) {
  const [step, setStep] = useState<1 | 2 | 3>(1);
  // A member of an organization already makes another ("Create organization" in the switcher).
  const [another] = useState(Boolean(session.organizationId));
  const { error, submit, busy } = useAction();
  const { values, field } = useFields({ fullName: "", organizationName: "" }, error);
  const named = field("organizationName");
  const organizationName = { ...named, issue: named.issue ?? error?.fields.name };
  const [result, setResult] = useState<Pick<OnboardingResult, "organization"> | null>(null);
  // The name given at sign-up is not asked again (null: none was given, or another organization).
  const [knownName, setKnownName] = useState<string | null | undefined>(another ? null : undefined);
  useEffect(() => {
    if (another) return;
    call<{ fullName: string | null }>("GET", "/api/me").then(
      (me) => setKnownName(me.fullName?.trim() ? me.fullName : null),
      () => setKnownName(null),
    );
  }, [another]);
  const createWorkspace = submit(async () => {
    const r = another
      ? await call<Pick<OnboardingResult, "organization">>("POST", "/api/organizations", {
          name: values.organizationName,
        })
      : await clientOf().onboarding.complete({ ...values, fullName: knownName ?? values.fullName });
    setResult(r);
    // The new organization is the one the console opens from now on, in a reload and a new tab.
    if (another) rememberOrganization(r.organization.id);
    onSession({ ...session, organizationId: r.organization.id, organizationName: r.organization.name });
    setStep(2);
  });
  return (
    <main className="narrow">
      <p className="steps">Step {step} of 3</p>
      {step === 1 && knownName === undefined && <Loading what="your account" />}
      {step === 1 && knownName !== undefined && (
        <>
          <h1>{another ? "Create an organization" : "Create your workspace"}</h1>
          <form onSubmit={createWorkspace} noValidate>
            {!another && knownName === null && <Field label="Your name" {...field("fullName")} required />}
            {/* POST /api/organizations names the field `name`. */}
            <Field label="Organization name" {...organizationName} required />
            <ErrorBox error={error} shownFields={["fullName", "organizationName", "name"]} />
            {/* Once: another organization is not idempotent as onboarding is. */}
            <button type="submit" disabled={busy}>
              {another ? "Create organization" : "Create workspace"}
            </button>
          </form>
          {another && (
            <p>
              <Link to="/prompts" navigate={navigate}>
                Back to {session.organizationName}
              </Link>
            </p>
          )}
        </>
      )}
      {step === 2 && result && (
        <>
          <h1>Your plan</h1>
          <dl className="summary">
            <PlanTerms organization={result.organization} />
          </dl>
          <button type="button" onClick={() => setStep(3)}>
            Continue
          </button>
        </>
      )}
      {step === 3 && (
        <>
          <h1>Where do you want to start?</h1>
          <ul className="places">
            {PLACES.map((p) => (
              <li key={p.path}>
                <button type="button" onClick={() => navigate(p.path)}>
                  {p.name}
                </button>{" "}
                <span>{p.what}</span>
              </li>
            ))}
          </ul>
        </>
      )}
    </main>
  );
}
