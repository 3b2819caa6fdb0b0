/**
 * The API's resources and request bodies, named: every type here is derived from the generated
 * OpenAPI types (gen/kiln-api.ts), which come from the gateway's route schemas.
 */
import type { components, operations } from "./gen/kiln-api.js";

type Schemas = components["schemas"];

/** The JSON body of an operation's request. */
export type RequestBody<Op extends keyof operations> = operations[Op] extends {
  requestBody?: { content: { "application/json": infer B } };
}
  ? B
  : never;

/** The query parameters of an operation. */
export type Query<Op extends keyof operations> = NonNullable<operations[Op]["parameters"]["query"]>;

export type ErrorEnvelope = Schemas["ErrorEnvelope"];
export type User = Schemas["User"];
export type Organization = Schemas["Organization"];
export type Member = Schemas["Member"];
export type ApiKey = Schemas["ApiKey"];
export type Membership = Schemas["Membership"];
export type Invitation = Schemas["Invitation"];
export type AcceptedInvitation = Schemas["AcceptedInvitation"];
export type OnboardingResult = Schemas["OnboardingResult"];
export type SetupVerification = Schemas["SetupVerification"];
export type Model = Schemas["Model"];

export type VersionSummary = Schemas["VersionSummary"];
export type VersionDiff = Schemas["VersionDiff"];
export type ToolRef = Schemas["ToolRef"];
export type ResponseFormat = Schemas["ResponseFormat"];
export type Prompt = Schemas["Prompt"];
export type PromptVersion = Schemas["PromptVersion"];
export type PromptFolder = Schemas["PromptFolder"];
export type PromptInclude = Schemas["PromptInclude"];
export type PromptPartial = Schemas["PromptPartial"];
export type ToolConfig = Schemas["ToolConfig"];
export type Tool = Schemas["Tool"];
export type ToolVersion = Schemas["ToolVersion"];
export type CompositionStep = Schemas["CompositionStep"];
export type Skill = Schemas["Skill"];
export type SkillVersion = Schemas["SkillVersion"];
export type Label = Schemas["Label"];
export type LabelMove = Schemas["LabelMove"];
export type Webhook = Schemas["Webhook"];
export type Budget = Schemas["Budget"];
export type ProviderConnection = Schemas["ProviderConnection"];
export type ProviderConnectionTest = Schemas["ProviderConnectionTest"];
export type ModelRoute = Schemas["ModelRoute"];
export type UsageReport = Schemas["UsageReport"];
export type UsageRow = Schemas["UsageRow"];
export type AnnotationQueue = Schemas["AnnotationQueue"];
export type AnnotationQueueItem = Schemas["QueueItem"];
export type AnnotationQueueItemWithContent = Schemas["QueueItemWithContent"];
export type AnnotationQueueClaim = Schemas["QueueClaim"];
export type Dataset = Schemas["Dataset"];
export type DatasetItem = Schemas["DatasetItem"];
export type ScoreConfig = Schemas["ScoreConfig"];
export type Bundle = Schemas["Bundle"];
export type PromptfooImport = Schemas["PromptfooImport"];
export type ImportReport = Schemas["ImportReport"];
export type ImportItem = Schemas["ImportItem"];
export type WebhookWithSecret = Schemas["WebhookWithSecret"];
export type WebhookDelivery = Schemas["Delivery"];
export type WebhookDeliveryAttempt = Schemas["DeliveryAttempt"];
export type OnlineRule = Schemas["OnlineRule"];
export type OnlineScore = Schemas["OnlineScore"];
export type OnlineScoreSummary = Schemas["OnlineScoreSummary"];

export type Trace = Schemas["Trace"];
export type AuditEntry = Schemas["AuditEntry"];
export type AuditVerification = Schemas["AuditVerification"];
/** The organization's audit webhook (non-public organization settings; docs/governance.md "Streaming to a webhook"). */
export type AuditStream = Schemas["AuditStream"];
export type AuditStreamWithSecret = Schemas["AuditStreamWithSecret"];
export type TraceDetail = Schemas["TraceDetail"];
export type Span = Schemas["Span"];
export type Generation = Schemas["Generation"];
export type SpanToolCall = Schemas["SpanToolCall"];
export type Session = Schemas["Session"];
export type SessionDetail = Schemas["SessionDetail"];
export type SessionTrace = Schemas["SessionTrace"];

export type Usage = Schemas["Usage"];
export type ToolCall = Schemas["ToolCall"];
export type RunOutput = Schemas["RunOutput"];
export type PromptRun = Schemas["PromptRun"];
export type PromptRunStreamEvent = Schemas["PromptRunStreamEvent"];
export type SkillRun = Schemas["SkillRun"];
export type SkillRunStep = Schemas["SkillRunStep"];
export type SkillPreview = Schemas["SkillPreview"];

export type Workflow = Schemas["Workflow"];
export type WorkflowStep = Schemas["WorkflowStep"];
export type WorkflowValidation = Schemas["WorkflowValidation"];
export type Agent = Schemas["Agent"];
export type AgentVersion = Schemas["AgentVersion"];
export type AgentRun = Schemas["AgentRun"];
export type AgentRunStep = Schemas["AgentRunStep"];
export type AgentRunComparison = Schemas["AgentRunComparison"];
export type LoadedAgentInputs = Schemas["LoadedAgentInputs"];

export type Assertion = Schemas["Assertion"];
export type EvaluationCase = Schemas["EvaluationCase"];
export type EvaluationRun = Schemas["EvaluationRun"];
export type EvaluationComparison = Schemas["EvaluationComparison"];
export type EvaluationRunListItem = Schemas["EvaluationRunListItem"];
export type JudgeRun = Schemas["JudgeRun"];
export type ModelRun = Schemas["ModelRun"];
export type StartedEvaluationRun = operations["startEvaluationRun"]["responses"][202]["content"]["application/json"];
export type PromptEvaluation = Schemas["PromptEvaluation"];
export type PromptEvaluationListItem = Schemas["PromptEvaluationListItem"];
export type PromptEvaluationComparison = Schemas["PromptEvaluationComparison"];

/**
 * Bodies whose free-form fields the catalog and evaluation services check (the gateway only
 * checks that they are objects): typed here with the shapes those services accept, which the
 * document describes for the answers.
 */
export type CreateToolRequest = Omit<RequestBody<"createTool">, "config"> & { config: ToolConfig };
export type CreateToolVersionRequest = Omit<RequestBody<"createToolVersion">, "config"> & { config?: ToolConfig };
export type CreatePromptVersionRequest = Omit<RequestBody<"createPromptVersion">, "responseFormat"> & {
  responseFormat?: ResponseFormat;
};
export type NewEvaluationCase = Omit<RequestBody<"createEvaluationCases">["cases"][number], "assertions"> & {
  assertions?: Assertion[];
};
export type CreateEvaluationCasesRequest = Omit<RequestBody<"createEvaluationCases">, "cases"> & {
  cases: NewEvaluationCase[];
};
