/**
 * The payloads of the events on the bus, as docs/events/*.schema.json describe them (test/
 * event-schemas.test.ts holds the bytes to those schemas): the types their publishers build and
 * their consumers read. Subjects and streams: bus-names.ts.
 */

/** Every event but run.completed: `{id, type, organizationId, occurredAt, data}`. */
export interface EventEnvelope<T extends string = string, D = Record<string, unknown>> {
  /** `<type>:<source id>`: the JetStream message id, so a change repeated is one event. */
  id: string;
  type: T;
  organizationId: string;
  /** ISO 8601. */
  occurredAt: string;
  data: D;
}

/** What a run ran: a prompt, skill or agent and its version; "" where the run is of another kind. */
type RunTargetIds = Record<
  "promptId" | "promptVersionId" | "skillId" | "skillVersionId" | "agentId" | "agentVersionId",
  string
>;

/**
 * run.completed (docs/events/run.completed.schema.json): the protobuf JSON of
 * kiln.events.v1.RunCompleted with every field present, 64-bit integers as decimal strings.
 */
export interface RunCompletedEvent extends RunTargetIds {
  runId: string;
  kind: "prompt" | "skill" | "agent" | "judge" | "model";
  organizationId: string;
  status: "succeeded" | "failed" | "cancelled";
  /** Absent when no model was called. */
  provider?: string;
  model?: string;
  usage: {
    inputTokens: string;
    outputTokens: string;
    cachedInputTokens?: string;
    cacheWriteInputTokens?: string;
    reasoningTokens?: string;
  };
  estimatedCostUsd?: number;
  latencyMs: string;
  toolCallCount: string;
  completedAt: string;
  /** The label the version was resolved through; "" for none. */
  label: string;
  /** Set on the runs an evaluation made; "" otherwise. */
  evaluationRunId: string;
}

export type CatalogEventType =
  | "prompt.version.created"
  | "prompt.published"
  | "skill.published"
  | "agent.published"
  | "label.moved";

/** The resource a catalog event is about, by the field its kind names. */
export type ParentId = { promptId: string } | { skillId: string } | { agentId: string };

export interface PromptVersionCreatedData {
  promptId: string;
  versionId: string;
  version: number;
  status: string;
  model: string | null;
}

export type PublishedData = ParentId & {
  versionId: string;
  version: number;
  previousVersionId: string | null;
  by: string | null;
};

export type LabelMovedData = ParentId & {
  kind: "prompt" | "skill" | "agent";
  label: string;
  action: "moved" | "published" | "deleted";
  versionId: string | null;
  version: number | null;
  previousVersionId: string | null;
  by: string | null;
};

/** How many of an evaluation run's cases changed which way against the baseline (a report's summary.changes). */
export interface EvaluationChangeCounts {
  fixed: number;
  regressed: number;
  outputChanged: number;
  unchanged: number;
  /** Cases that failed every attempt before and after (also counted above). */
  stillFailing: number;
  /** Cases whose attempts disagree after (also counted above). */
  flaky: number;
}

/** One target of an evaluation run: a prompt version (with the model it ran on) or a skill version. */
export type EvaluationTarget =
  | { label: string; promptVersionId: string; model?: string }
  | { label: string; skillVersionId: string };

export type EvaluationCompletedData = ({ promptId: string } | { skillId: string }) & {
  evaluationRunId: string;
  status: "completed" | "cancelled";
  targets: EvaluationTarget[];
  repeats: number;
  caseCount: number;
  summary: string;
  /** The report's summary.changes. */
  changes: EvaluationChangeCounts;
  contractValid: boolean;
};

export interface BudgetThresholdReachedData {
  budgetId: string;
  name: string;
  /** `type` and the id its type names (`apiKeyId`, `promptId`, `connectionId`; none for the organization). */
  scope: Record<string, string>;
  period: string;
  periodStart: string;
  periodEnd: string;
  action: string;
  limitUsd: number;
  threshold: number;
  spentUsd: number;
}

/** A generation span as trace.ingested names it. */
export interface IngestedGeneration {
  spanId: string;
  name: string;
  requestModel: string;
  responseModel: string;
  sessionId: string;
}

export interface TraceIngestedData {
  traceId: string;
  generations: IngestedGeneration[];
}

/** The events of the event streams, by their envelope's type. */
export type CatalogEvent = EventEnvelope<CatalogEventType>;
export type TraceIngestedEvent = EventEnvelope<"trace.ingested", TraceIngestedData>;
export type EvaluationCompletedEvent = EventEnvelope<"evaluation.completed", EvaluationCompletedData>;
export type BudgetThresholdReachedEvent = EventEnvelope<"budget.threshold_reached", BudgetThresholdReachedData>;
