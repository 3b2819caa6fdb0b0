import { Fragment, StrictMode, useCallback, useEffect, useMemo, useState } from "react";
import { createRoot } from "react-dom/client";
import { AgentDetail, AgentList } from "./agents.js";
import {
  call,
  clientOf,
  currentSession,
  errorOf,
  onOrganizationRemembered,
  rememberOrganization,
  type Session,
  type ShownError,
} from "./api.js";
import { AuditLogPage } from "./audit-log.js";
import { Onboarding, SignIn, SignUp } from "./auth.js";
import { DatasetDetail } from "./dataset-detail.js";
import { Datasets } from "./datasets.js";
import { EvaluationCompare } from "./evaluation-compare.js";
import { EvaluationReport } from "./evaluation-report.js";
import { AcceptInvitation, invitationTokenOf } from "./invite.js";
import { ApiKeys } from "./keys.js";
import { McpSetup } from "./mcp.js";
import { Members } from "./members.js";
import { Models } from "./models.js";
import { NotFound, sectionOf } from "./nav.js";
import { OnlineEvaluation } from "./online-evaluation.js";
import { OrganizationSettings } from "./organization.js";
import { Playground } from "./playground.js";
import { PromptEvaluationReport } from "./prompt-evaluation-report.js";
import { folderOfPath, PromptFolderPage } from "./prompt-folders.js";
import { PromptDetail } from "./prompts.js";
import { ReviewQueue } from "./review-queue.js";
import { ReviewQueues } from "./review-queues.js";
import { ReviewScreen } from "./review-screen.js";
import { type Navigate, usePath } from "./router.js";
import { RunDetail } from "./run-detail.js";
import { Runs } from "./runs.js";
import { SessionDetail, Sessions } from "./sessions.js";
import { ShellFrame } from "./shell.js";
import { SkillDetail, SkillList } from "./skills.js";
import { ToolDetail, Tools } from "./tools.js";
import { TraceDetail } from "./trace-detail.js";
import { Traces } from "./traces.js";
import { Transfer } from "./transfer.js";
import { Pending } from "./ui.js";
import { Usage } from "./usage.js";
import "./styles.css";

function Shell({
  session,
  path,
  navigate,
  onSwitch,
  onSignOut,
}: {
  session: Session;
  path: string;
  navigate: Navigate;
  onSwitch: (organizationId: string) => Promise<void>;
  onSignOut: () => void;
}) {
  const kiln = useMemo(() => clientOf(), []);
  const promptFolder = /^\/prompts\/in\/(.+?)\/?$/.exec(path)?.[1];
  const promptId = /^\/prompts\/([^/]+)$/.exec(path)?.[1];
  const skillId = /^\/skills\/([^/]+)$/.exec(path)?.[1];
  const agentId = /^\/agents\/([^/]+)$/.exec(path)?.[1];
  const runId = /^\/runs\/([^/]+)$/.exec(path)?.[1];
  const toolId = /^\/tools\/([^/]+)$/.exec(path)?.[1];
  const traceId = /^\/traces\/([^/]+)$/.exec(path)?.[1];
  const traceSessionId = /^\/sessions\/([^/]+)$/.exec(path)?.[1];
  const queueId = /^\/review\/([^/]+)$/.exec(path)?.[1];
  const datasetId = /^\/datasets\/([^/]+)$/.exec(path)?.[1];
  const reviewing = /^\/review\/([^/]+)\/review$/.exec(path)?.[1];
  const evaluation = /^\/skills\/([^/]+)\/evaluations\/([^/]+)$/.exec(path);
  const compared = /^\/skills\/([^/]+)\/evaluations\/([^/]+)\/compare\/([^/]+)$/.exec(path);
  const promptEvaluation = /^\/prompts\/([^/]+)\/evaluations\/([^/]+)$/.exec(path);
  let page: React.ReactNode;
  const pageProps = { kiln, session, navigate };
  if (evaluation?.[1] && evaluation[2])
    page = <EvaluationReport {...pageProps} skillId={evaluation[1]} runId={evaluation[2]} />;
  else if (compared?.[1] && compared[2] && compared[3])
    page = <EvaluationCompare {...pageProps} skillId={compared[1]} baseId={compared[2]} headId={compared[3]} />;
  else if (promptEvaluation?.[1] && promptEvaluation[2])
    page = <PromptEvaluationReport {...pageProps} promptId={promptEvaluation[1]} runId={promptEvaluation[2]} />;
  else if (promptFolder)
    page = <PromptFolderPage key={promptFolder} {...pageProps} folder={folderOfPath(promptFolder)} />;
  else if (promptId) page = <PromptDetail {...pageProps} id={promptId} />;
  else if (toolId) page = <ToolDetail kiln={kiln} id={toolId} />;
  else if (runId) page = <RunDetail kiln={kiln} session={session} id={runId} navigate={navigate} />;
  else if (traceId) page = <TraceDetail {...pageProps} traceId={traceId} />;
  else if (path === "/traces") page = <Traces {...pageProps} />;
  else if (traceSessionId) page = <SessionDetail {...pageProps} sessionId={decodeURIComponent(traceSessionId)} />;
  else if (path === "/sessions") page = <Sessions {...pageProps} />;
  else if (reviewing) page = <ReviewScreen {...pageProps} id={reviewing} />;
  else if (queueId) page = <ReviewQueue {...pageProps} id={queueId} />;
  else if (path === "/review") page = <ReviewQueues {...pageProps} />;
  else if (datasetId) page = <DatasetDetail {...pageProps} id={datasetId} />;
  else if (path === "/datasets") page = <Datasets {...pageProps} />;
  else if (path === "/runs") page = <Runs kiln={kiln} session={session} navigate={navigate} />;
  else if (path === "/online-evaluation") page = <OnlineEvaluation kiln={kiln} session={session} navigate={navigate} />;
  else if (agentId) page = <AgentDetail kiln={kiln} session={session} id={agentId} navigate={navigate} />;
  else if (path === "/agents") page = <AgentList kiln={kiln} session={session} navigate={navigate} />;
  else if (skillId) page = <SkillDetail kiln={kiln} session={session} id={skillId} navigate={navigate} />;
  else if (path === "/skills") page = <SkillList kiln={kiln} session={session} navigate={navigate} />;
  else if (path === "/playground") page = <Playground kiln={kiln} session={session} navigate={navigate} />;
  else if (path === "/models") page = <Models kiln={kiln} session={session} />;
  else if (path === "/tools") page = <Tools kiln={kiln} session={session} navigate={navigate} />;
  else if (path === "/api-keys") page = <ApiKeys session={session} />;
  else if (path === "/usage") page = <Usage session={session} />;
  else if (path === "/audit-log") page = <AuditLogPage {...pageProps} />;
  else if (path === "/mcp-setup") page = <McpSetup session={session} />;
  else if (path === "/members") page = <Members session={session} />;
  else if (path === "/settings") page = <OrganizationSettings session={session} />;
  else if (path === "/transfer") page = <Transfer kiln={kiln} session={session} />;
  else if (path === "/prompts" || path === "/") page = <PromptFolderPage key="" {...pageProps} folder="" />;
  else page = <NotFound path={path} navigate={navigate} />;
  return (
    <ShellFrame session={session} path={path} navigate={navigate} onSwitch={onSwitch} onSignOut={onSignOut}>
      {/* Every page starts afresh in another organization: its data is read again for it. */}
      <Fragment key={session.organizationId}>{page}</Fragment>
    </ShellFrame>
  );
}

function App() {
  // undefined while the gateway is asked whether the session cookie is signed in.
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const [error, setError] = useState<ShownError | null>(null);
  const [path, navigate] = usePath();
  useEffect(() => {
    currentSession().then(setSession, (e: unknown) => setError(errorOf(e)));
  }, []);
  /** Opens the organization the session now names: a page of one thing in the old one goes to its list. */
  const reopen = useCallback(
    () =>
      currentSession().then((next) => {
        const section = sectionOf(location.pathname);
        if (section && section !== location.pathname) navigate(section);
        setSession(next);
      }),
    [navigate],
  );
  // A switch made in another tab: this one follows.
  const organizationId = session?.organizationId;
  useEffect(
    () =>
      onOrganizationRemembered((id) => {
        if (organizationId && id !== organizationId) reopen().catch((e: unknown) => setError(errorOf(e)));
      }),
    [organizationId, reopen],
  );
  // Signed in on the sign-in or sign-up address (a bookmark, the back button): the product instead.
  const signedInOnAuthPage = Boolean(session?.organizationId) && (path === "/signin" || path === "/signup");
  useEffect(() => {
    if (signedInOnAuthPage) navigate("/prompts");
  }, [signedInOnAuthPage, navigate]);
  if (session === undefined) return <Pending error={error} what="your session" />;
  if (path === "/invite") {
    return (
      <AcceptInvitation
        token={invitationTokenOf(location.hash)}
        session={session}
        onSession={setSession}
        navigate={navigate}
      />
    );
  }
  if (!session) {
    return path === "/signup" ? (
      <SignUp onSession={setSession} navigate={navigate} />
    ) : (
      <SignIn onSession={setSession} navigate={navigate} />
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
      onSwitch={(organizationId) => {
        // Remembered, as an invitation's organization is: a reload, a new tab and the open tabs open it too.
        rememberOrganization(organizationId);
        return reopen();
      }}
      onSignOut={() => {
        call("DELETE", "/api/session").finally(() => {
          setSession(null);
          navigate("/signin");
        });
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
