/** The named schemas of the OpenAPI document (openapi.ts): every schema routes use through `ref()`. */
import { BundleSchema } from "@kiln/contracts/bundle";
import { AgentRunComparisonView, AgentRunView, AgentStepView, LoadedInputsView } from "./routes/agent-run-views.js";
import {
  AgentVersionView,
  AgentView,
  IssueView,
  WorkflowStepView,
  WorkflowValidationView,
  WorkflowView,
} from "./routes/agent-views.js";
import { AuditEntryView, AuditVerificationView } from "./routes/audit-routes.js";
import { AuditStreamSecretView, AuditStreamView, AuditStreamWithSecretView } from "./routes/audit-stream-routes.js";
import { BudgetView } from "./routes/budget-views.js";
import { ImportItemView, ImportReportView, PromptfooImportBody } from "./routes/bundle-routes.js";
import {
  PromptMessageView,
  PromptVersionView,
  PromptView,
  ResponseFormatView,
  ToolConfigView,
  ToolRefView,
  ToolVersionView,
  ToolView,
  VersionDiffView,
  VersionRefView,
} from "./routes/catalog-views.js";
import { DatasetItemView, DatasetView } from "./routes/dataset-views.js";
import { ASSERTION_SCHEMAS, AssertionView } from "./routes/evaluation-assertion-views.js";
import {
  EvaluationCaseView,
  EvaluationComparisonView,
  EvaluationRunListItemView,
  EvaluationRunView,
} from "./routes/evaluation-views.js";
import { LabelMoveView, LabelView } from "./routes/label-views.js";
import { ModelRouteView } from "./routes/model-route-views.js";
import { ModelView } from "./routes/model-views.js";
import {
  OnlineRuleView,
  OnlineScoreBucketView,
  OnlineScoreSummaryView,
  OnlineScoreView,
  OnlineTargetView,
} from "./routes/online-views.js";
import { PromptDraftBody } from "./routes/prompt-content.js";
import {
  PromptEvaluationComparisonView,
  PromptEvaluationListItemView,
  PromptEvaluationView,
} from "./routes/prompt-evaluation-views.js";
import { PromptFolderView } from "./routes/prompt-folder-routes.js";
import { PromptIncludeView, PromptPartialView } from "./routes/prompt-partial-views.js";
import { ConnectionTestView, ProviderConnectionView } from "./routes/provider-connection-views.js";
import {
  AnnotationQueueView,
  AutoAddRuleView,
  ClaimView,
  QueueItemView,
  QueueItemWithContentView,
  QueueProgressView,
  ScoreConfigView,
} from "./routes/review-views.js";
import { RoleListView, RoleView } from "./routes/role-routes.js";
import {
  JudgeRunView,
  ModelRunView,
  PromptRunStreamEventView,
  PromptRunView,
  RouteAttemptView,
  RunCacheView,
  RunErrorView,
  RunOutputView,
  SkillPreviewView,
  SkillRunStepView,
  SkillRunView,
  ToolCallView,
  UsageView,
} from "./routes/run-views.js";
import { SamlSettingsView } from "./routes/saml-settings-routes.js";
import { ScimTokenView } from "./routes/scim-token-routes.js";
import { CompositionStepView, SkillVersionView, SkillView } from "./routes/skill-views.js";
import { TraceSettingsView } from "./routes/trace-settings-routes.js";
import {
  GenerationView,
  SessionDetailView,
  SessionTraceView,
  SessionView,
  SpanToolCallView,
  SpanView,
  TraceDetailView,
  TraceView,
} from "./routes/trace-views.js";
import { UsageReportView, UsageRowView } from "./routes/usage-routes.js";
import { AuthorView, VersionSummaryView } from "./routes/versioned-views.js";
import {
  AcceptedInvitationView,
  ApiKeyView,
  InvitationView,
  MembershipView,
  MemberView,
  OnboardingView,
  OrganizationMembershipView,
  OrganizationView,
  PrincipalView,
  SetupCheckView,
  SetupVerificationView,
  UserView,
} from "./routes/views.js";
import { DeliveryAttemptView, DeliveryView, WebhookView, WebhookWithSecretView } from "./routes/webhook-views.js";
import { ErrorEnvelope, type NamedSchema } from "./schemas.js";

/** Every schema routes use through `ref()`: registered once, emitted under components.schemas. */
export const COMPONENTS: NamedSchema[] = [
  ErrorEnvelope,
  UserView,
  OrganizationView,
  MembershipView,
  MemberView,
  InvitationView,
  AcceptedInvitationView,
  OrganizationMembershipView,
  OnboardingView,
  PrincipalView,
  SetupCheckView,
  SetupVerificationView,
  ApiKeyView,
  ScimTokenView,
  SamlSettingsView,
  AuditStreamView,
  AuditStreamWithSecretView,
  AuditStreamSecretView,
  ModelView,
  ProviderConnectionView,
  ConnectionTestView,
  AuthorView,
  VersionSummaryView,
  ToolRefView,
  PromptMessageView,
  ResponseFormatView,
  PromptIncludeView,
  PromptPartialView,
  PromptVersionView,
  PromptView,
  PromptFolderView,
  ToolConfigView,
  ToolView,
  ToolVersionView,
  VersionRefView,
  VersionDiffView,
  CompositionStepView,
  SkillView,
  SkillVersionView,
  UsageView,
  RunErrorView,
  RunOutputView,
  ToolCallView,
  RouteAttemptView,
  RunCacheView,
  PromptDraftBody,
  PromptRunView,
  PromptRunStreamEventView,
  JudgeRunView,
  ModelRunView,
  SkillRunStepView,
  SkillRunView,
  SkillPreviewView,
  WorkflowStepView,
  WorkflowView,
  IssueView,
  WorkflowValidationView,
  AgentView,
  AgentVersionView,
  AgentStepView,
  AgentRunView,
  LabelView,
  LabelMoveView,
  WebhookView,
  WebhookWithSecretView,
  ModelRouteView,
  BudgetView,
  BundleSchema,
  ImportItemView,
  ImportReportView,
  PromptfooImportBody,
  DeliveryAttemptView,
  DeliveryView,
  LoadedInputsView,
  AgentRunComparisonView,
  ...ASSERTION_SCHEMAS,
  AssertionView,
  EvaluationCaseView,
  EvaluationRunView,
  EvaluationRunListItemView,
  EvaluationComparisonView,
  PromptEvaluationView,
  PromptEvaluationListItemView,
  RoleView,
  RoleListView,
  PromptEvaluationComparisonView,
  GenerationView,
  SpanToolCallView,
  SpanView,
  TraceView,
  TraceDetailView,
  SessionView,
  SessionTraceView,
  SessionDetailView,
  OnlineTargetView,
  OnlineRuleView,
  OnlineScoreView,
  OnlineScoreBucketView,
  OnlineScoreSummaryView,
  ScoreConfigView,
  AutoAddRuleView,
  QueueProgressView,
  AnnotationQueueView,
  QueueItemView,
  QueueItemWithContentView,
  ClaimView,
  DatasetView,
  DatasetItemView,
  TraceSettingsView,
  UsageRowView,
  UsageReportView,
  AuditEntryView,
  AuditVerificationView,
].map((schema) => schema as unknown as NamedSchema);
