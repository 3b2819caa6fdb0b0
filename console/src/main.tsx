import { StrictMode, useMemo, useState } from "react";
import { createRoot } from "react-dom/client";
import { AgentDetail, AgentList } from "./agents.js";
import { clientOf, loadSession, type Session, saveSession } from "./api.js";
import { Onboarding, SignIn, SignUp } from "./auth.js";
import { EvaluationCompare } from "./evaluation-compare.js";
import { EvaluationReport } from "./evaluation-report.js";
import { ApiKeys } from "./keys.js";
import { McpSetup } from "./mcp.js";
import { Billing, Models, Users } from "./organization.js";
import { Playground } from "./playground.js";
import { PromptDetail, PromptList } from "./prompts.js";
import { type Navigate, usePath } from "./router.js";
import { RunDetail } from "./run-detail.js";
import { Runs } from "./runs.js";
import { SkillDetail, SkillList } from "./skills.js";
import { ToolDetail, Tools } from "./tools.js";
import { Transfer } from "./transfer.js";
import { Link } from "./ui.js";
import "./styles.css";

const NAV = [
  { path: "/prompts", name: "Prompts" },
  { path: "/tools", name: "Tools" },
  { path: "/skills", name: "Skills" },
  { path: "/agents", name: "Agents" },
  { path: "/playground", name: "Playground" },
  { path: "/runs", name: "Runs" },
  { path: "/models", name: "Models" },
  { path: "/users", name: "Users" },
  { path: "/billing", name: "Billing" },
  { path: "/api-keys", name: "API keys" },
  { path: "/mcp-setup", name: "MCP" },
  { path: "/transfer", name: "Export and import" },
];

function Shell({
  session,
  path,
  navigate,
  onSignOut,
}: {
  session: Session;
  path: string;
  navigate: Navigate;
  onSignOut: () => void;
}) {
  const kiln = useMemo(() => clientOf(session), [session]);
  const promptId = /^\/prompts\/([^/]+)$/.exec(path)?.[1];
  const skillId = /^\/skills\/([^/]+)$/.exec(path)?.[1];
  const agentId = /^\/agents\/([^/]+)$/.exec(path)?.[1];
  const runId = /^\/runs\/([^/]+)$/.exec(path)?.[1];
  const toolId = /^\/tools\/([^/]+)$/.exec(path)?.[1];
  const evaluation = /^\/skills\/([^/]+)\/evaluations\/([^/]+)$/.exec(path);
  const compared = /^\/skills\/([^/]+)\/evaluations\/([^/]+)\/compare\/([^/]+)$/.exec(path);
  let page: React.ReactNode;
  const pageProps = { kiln, session, navigate };
  if (evaluation?.[1] && evaluation[2])
    page = <EvaluationReport {...pageProps} skillId={evaluation[1]} runId={evaluation[2]} />;
  else if (compared?.[1] && compared[2] && compared[3])
    page = <EvaluationCompare {...pageProps} skillId={compared[1]} baseId={compared[2]} headId={compared[3]} />;
  else if (promptId) page = <PromptDetail kiln={kiln} session={session} id={promptId} />;
  else if (toolId) page = <ToolDetail kiln={kiln} id={toolId} />;
  else if (runId) page = <RunDetail kiln={kiln} session={session} id={runId} navigate={navigate} />;
  else if (path === "/runs") page = <Runs kiln={kiln} session={session} navigate={navigate} />;
  else if (agentId) page = <AgentDetail kiln={kiln} session={session} id={agentId} navigate={navigate} />;
  else if (path === "/agents") page = <AgentList kiln={kiln} session={session} navigate={navigate} />;
  else if (skillId) page = <SkillDetail kiln={kiln} session={session} id={skillId} navigate={navigate} />;
  else if (path === "/skills") page = <SkillList kiln={kiln} session={session} navigate={navigate} />;
  else if (path === "/playground") page = <Playground kiln={kiln} session={session} navigate={navigate} />;
  else if (path === "/models") page = <Models kiln={kiln} />;
  else if (path === "/tools") page = <Tools kiln={kiln} session={session} navigate={navigate} />;
  else if (path === "/api-keys") page = <ApiKeys session={session} />;
  else if (path === "/mcp-setup") page = <McpSetup session={session} />;
  else if (path === "/users") page = <Users session={session} />;
  else if (path === "/billing") page = <Billing session={session} />;
  else if (path === "/transfer") page = <Transfer kiln={kiln} session={session} />;
  else page = <PromptList kiln={kiln} session={session} navigate={navigate} />;
  return (
    <>
      <header>
        <strong>Kiln</strong>
        <nav aria-label="Main">
          <ul>
            {NAV.map((n) => (
              <li key={n.path}>
                <Link to={n.path} navigate={navigate} current={path === n.path || path.startsWith(`${n.path}/`)}>
                  {n.name}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <span className="org" role="note" aria-label="Organization">
          {session.organizationName}
        </span>
        <button type="button" className="link" onClick={onSignOut}>
          Sign out
        </button>
      </header>
      {page}
    </>
  );
}

function App() {
  const [session, setSessionState] = useState<Session | null>(loadSession);
  const [path, navigate] = usePath();
  const setSession = (s: Session | null) => {
    saveSession(s);
    setSessionState(s);
  };
  if (!session) {
    return path === "/signin" ? (
      <SignIn onSession={setSession} navigate={navigate} />
    ) : (
      <SignUp onSession={setSession} navigate={navigate} />
    );
  }
  if (!session.organizationId || path === "/onboarding") {
    return <Onboarding session={session} onSession={setSession} navigate={navigate} />;
  }
  return (
    <Shell
      session={session}
      path={path}
      navigate={navigate}
      onSignOut={() => {
        setSession(null);
        navigate("/signin");
      }}
    />
  );
}

const root = document.getElementById("root");
if (root)
  createRoot(root).render(
    <StrictMode>
      <App />
    </StrictMode>,
  );
