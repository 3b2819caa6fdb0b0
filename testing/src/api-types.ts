/**
 * The shapes of the REST answers the tests read (docs/api.md): identity, models, the catalog
 * families, evaluations and the error envelope. test-client.ts exports them too.
 */

export interface User {
  id: string;
  email: string;
  fullName: string;
}

export interface Organization {
  id: string;
  name: string;
  plan: string;
  entitlements: { aiEnabled: boolean; monthlyRunLimit: number };
  createdAt: string;
}

export interface Membership {
  organizationId: string;
  userId: string;
  role: "owner" | "admin" | "member";
  permissions: string[];
  createdAt: string;
}

export interface SignUpResult {
  user: User;
  accessToken: string;
  expiresAt: string;
}

/** What `signUp` returns: the 201 body plus the credentials it used. */
export interface SignedUp extends SignUpResult {
  email: string;
  password: string;
}

export interface TokenResult {
  accessToken: string;
  expiresAt: string;
}

export interface OnboardingResult {
  user: User;
  organization: Organization;
  membership: Membership;
}

export interface ApiKey {
  id: string;
  name: string;
  scopes: string[];
  organizationId: string;
  createdByUserId: string;
  createdAt: string;
  revokedAt: string | null;
}

export interface CreatedApiKey {
  id: string;
  name: string;
  scopes: string[];
  organizationId: string;
  /** `sk_<key id without its prefix>_<secret>`, shown once. */
  key: string;
  createdAt: string;
}

export interface SetupCheck {
  name: "authentication" | "organization" | "ai_entitlement" | "ai_permission";
  ok: boolean;
  message?: string;
}

export interface SetupVerifyResult {
  ok: boolean;
  principal: { type: "user" | "api_key"; id: string; scopes?: string[] };
  organization: Organization | null;
  checks: SetupCheck[];
}

export interface Model {
  id: string;
  provider: string;
  model: string;
  available: boolean;
  capabilities: { tools: boolean; jsonSchema: boolean; input: ("text" | "image")[] };
  pricing: { inputPerMTokUsd: number | null; outputPerMTokUsd: number | null };
}

export interface List<T> {
  data: T[];
  nextCursor: string | null;
}

export interface ErrorBody {
  error: { code: string; message: string; details: { field: string; issue: string }[]; requestId: string };
}

/** api.md "Prompts", "Tools", "Version diffs", "Skills". */
export interface VersionSummary {
  id: string;
  version: number;
  status: "draft" | "published";
  createdAt: string;
  publishedAt: string | null;
}

export interface ToolRef {
  toolId: string;
  toolVersionId: string;
  toolKey: string;
}

/** A tool to attach: a bare tool id pins its current version. */
export type ToolSelector = string | { toolId: string; toolVersionId?: string };

export interface PromptVersion {
  id: string;
  promptId: string;
  organizationId: string;
  version: number;
  status: "draft" | "published";
  systemPrompt: string;
  developerPrompt: string | null;
  variablesSchema: unknown;
  responseFormat: unknown;
  temperature: number | null;
  maxOutputTokens: number | null;
  cacheTtlSeconds: number | null;
  model: string | null;
  tools: ToolRef[];
  createdAt: string;
  publishedAt: string | null;
  createdBy: { type: "user" | "api_key" | "service"; id: string } | null;
  message: string | null;
}

export interface Prompt {
  id: string;
  organizationId: string;
  name: string;
  description: string;
  defaultModel: string | null;
  publishedVersionId: string | null;
  latestVersion: number;
  versions: VersionSummary[];
  version: PromptVersion | null;
  createdAt: string;
  updatedAt: string;
}

export interface PromptVersionInput {
  systemPrompt: string;
  developerPrompt?: string | null;
  variablesSchema?: unknown;
  responseFormat?: unknown;
  temperature?: number | null;
  maxOutputTokens?: number | null;
  cacheTtlSeconds?: number | null;
  model?: string | null;
  tools?: ToolSelector[];
}

export interface Tool {
  id: string;
  organizationId: string;
  toolKey: string;
  name: string;
  description: string;
  type: "manual_stub" | "http";
  currentVersionId: string;
  latestVersion: number;
  config: unknown;
  inputSchema: unknown;
  createdAt: string;
  updatedAt: string;
}

export interface ToolVersion {
  id: string;
  toolId: string;
  version: number;
  type: "manual_stub" | "http";
  config: unknown;
  inputSchema: unknown;
  createdAt: string;
}

export interface VersionDiff {
  from: { versionId: string; version: number } | null;
  to: { versionId: string; version: number };
  changes: { op: "add" | "remove" | "replace"; path: string; before?: unknown; after?: unknown }[];
  summary: string;
}

export interface CompositionStep {
  order: number;
  alias: string;
  promptId: string;
  promptVersionId: string;
  promptName: string;
  version: number;
  variables: Record<string, unknown>;
}

export interface Skill {
  id: string;
  organizationId: string;
  name: string;
  description: string;
  draftVersionId: string | null;
  publishedVersionId: string | null;
  versions: VersionSummary[];
  describedVersionId: string;
  promptComposition: CompositionStep[];
  tools: ToolRef[];
  inputSchema: unknown;
  outputSchema: unknown;
  createdAt: string;
  updatedAt: string;
}

export interface SkillVersion {
  id: string;
  skillId: string;
  version: number;
  status: "draft" | "published";
  promptComposition: CompositionStep[];
  tools: ToolRef[];
  inputSchema: unknown;
  outputSchema: unknown;
  createdAt: string;
  publishedAt: string | null;
}

/** One step of POST /api/skill-versions/:id/prompts. */
export interface PromptStepInput {
  promptId: string;
  promptVersionId?: string;
  alias?: string;
  variables?: Record<string, unknown>;
}

/** api.md "Evaluations". */
export type Assertion =
  | { type: "equals"; value: unknown }
  | { type: "contains"; value: string }
  | { type: "regex"; pattern: string; flags?: string }
  | { type: "json_schema"; schema: Record<string, unknown> }
  | { type: "json_path"; path: string; equals: unknown }
  | { type: "max_latency_ms"; value: number }
  | { type: "max_cost_usd"; value: number }
  | { type: "llm_judge"; rubric: string; model?: string; threshold?: number };

export interface NewEvaluationCase {
  name?: string;
  input: Record<string, unknown>;
  expectedOutput?: unknown;
  assertions?: Assertion[];
}

export interface EvaluationCase {
  id: string;
  skillId: string;
  organizationId: string;
  name: string;
  input: Record<string, unknown>;
  expectedOutput: unknown;
  assertions: Assertion[];
  createdAt: string;
}

export type EvaluationTargetLabel = string;

export interface EvaluationStarted {
  id: string;
  evaluationRunId: string;
  status: "queued";
}

export interface EvaluationTargetResult {
  outcome: "pass" | "fail" | "error";
  runId: string | null;
  output: { text: string; json?: unknown } | null;
  assertions: { type: string; passed: boolean; message: string }[];
  contractValid: boolean | null;
  latencyMs: number;
  estimatedCostUsd: number | null;
  error?: { code: string; message: string };
  attempts: {
    attempt: number;
    outcome: "pass" | "fail" | "error";
    runId: string | null;
    latencyMs: number;
    estimatedCostUsd: number | null;
    usage: { inputTokens: number; outputTokens: number } | null;
    judgeRuns: {
      runId: string;
      usage: { inputTokens: number; outputTokens: number };
      estimatedCostUsd: number | null;
    }[];
  }[];
  passRate: number;
  verdict: "passed" | "failed" | "flaky";
}

export interface EvaluationRun {
  id: string;
  evaluationRunId: string;
  skillId: string;
  status: "queued" | "running" | "completed" | "failed" | "cancelled";
  repeats: number;
  targets: { label: EvaluationTargetLabel; skillVersionId: string }[];
  results: {
    caseId: string;
    byTarget: Partial<Record<EvaluationTargetLabel, EvaluationTargetResult>>;
    change: "unchanged" | "fixed" | "regressed" | "output_changed" | null;
  }[];
  summary: {
    byTarget: Partial<
      Record<
        EvaluationTargetLabel,
        {
          passed: number;
          failed: number;
          errored: number;
          passRate: number;
          avgLatencyMs: number;
          totalCostUsd: number | null;
          [total: string]: unknown;
        }
      >
    >;
    repeats: number;
    changes: {
      fixed: number;
      regressed: number;
      outputChanged: number;
      unchanged: number;
      stillFailing: number;
      flaky: number;
    };
    text: string;
  } | null;
  contractValidity: {
    valid: boolean;
    violations: { caseId?: string; target: string; kind: string; message: string }[];
    breakingChanges: {
      kind: "input_required_added" | "input_type_changed" | "output_field_removed" | "output_type_changed";
      path: string;
      message: string;
    }[];
  } | null;
  createdAt: string;
  completedAt: string | null;
}
