import type { OnboardingResult } from "@kiln/sdk";
import { useState } from "react";
import { useAction, useFields } from "./action.js";
import { call, clientOf, currentSession, type Session } from "./api.js";
import { PlanTerms } from "./organization.js";
import type { Navigate } from "./router.js";
import { ErrorBox, Field, Link } from "./ui.js";

/** Sign up (built-in issuer), then onboarding. */
export function SignUp({ onSession, navigate }: { onSession: (s: Session) => void; navigate: Navigate }) {
  const { error, submit, busy } = useAction();
  const { values, field } = useFields({ fullName: "", email: "", password: "" }, error);
  const signUp = submit(async () => {
    await call("POST", "/api/auth/signup", values);
    // The account's session is the httpOnly cookie: the token of the sign-up answer is not kept.
    await call("POST", "/api/session", { email: values.email, password: values.password });
    onSession((await currentSession()) ?? {});
    navigate("/onboarding");
  });
  return (
    <main className="narrow">
      <h1>Create your Kiln account</h1>
      <form onSubmit={signUp} noValidate>
        <Field label="Full name" {...field("fullName")} />
        <Field label="Email" type="email" {...field("email")} autoComplete="email" required />
        <Field label="Password" type="password" {...field("password")} autoComplete="new-password" required />
        <ErrorBox error={error} shownFields={["fullName", "email", "password"]} />
        <button type="submit" disabled={busy}>
          {busy ? "Creating…" : "Sign up"}
        </button>
      </form>
      <p>
        Have an account?{" "}
        <Link to="/signin" navigate={navigate}>
          Sign in
        </Link>
      </p>
    </main>
  );
}

export function SignIn({ onSession, navigate }: { onSession: (s: Session) => void; navigate: Navigate }) {
  const { error, submit, busy } = useAction();
  // Sign-in names no field: what the API says shows above the button.
  const { values, field } = useFields({ email: "", password: "" }, null);
  const signIn = submit(async () => {
    await call("POST", "/api/session", values);
    // An onboarded user goes straight on: to the page they opened, else to their prompts.
    const session = (await currentSession()) ?? {};
    onSession(session);
    const opened = location.pathname;
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
      <p>
        New here?{" "}
        <Link to="/signup" navigate={navigate}>
          Create an account
        </Link>
      </p>
    </main>
  );
}

const PLACES = [
  { path: "/playground", name: "Playground", what: "run a prompt and see tokens, cost and latency" },
  { path: "/models", name: "Models", what: "the models you can call and their prices" },
  { path: "/members", name: "Members", what: "invite your team and choose their roles" },
  { path: "/settings", name: "Settings", what: "your plan and the labels only admins move" },
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
  const { error, submit } = useAction();
  const { values, field } = useFields({ fullName: "", organizationName: "" }, error);
  const [result, setResult] = useState<OnboardingResult | null>(null);
  const createWorkspace = submit(async () => {
    const r = await clientOf().onboarding.complete(values);
    setResult(r);
    onSession({ ...session, organizationId: r.organization.id, organizationName: r.organization.name });
    setStep(2);
  });
  return (
    <main className="narrow">
      <p className="steps">Step {step} of 3</p>
      {step === 1 && (
        <>
          <h1>Create your workspace</h1>
          <form onSubmit={createWorkspace} noValidate>
            <Field label="Your name" {...field("fullName")} required />
            <Field label="Organization name" {...field("organizationName")} required />
            <ErrorBox error={error} shownFields={["fullName", "organizationName"]} />
            <button type="submit">Create workspace</button>
          </form>
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
