/**
 * Which REST writes are audited changes, and as what (docs/governance.md "Actions"): each write
 * operation of the OpenAPI document, by operationId, names its action, its target's type and where
 * the target's id is read (`p.` the path's parameters, `r.` the answer, `b.` the body; `+` joins
 * two). A write that changes nothing an organization configures (a run, a preview, a check, a
 * test delivery) is declared `null` with why. A test walks the document: a write route missing
 * here fails it, so no new write goes unaudited by oversight.
 */
export type AuditAction = readonly [action: string, targetType: string, targetId: string];

const NOT_A_CHANGE = null;

export const AUDIT_ACTIONS: Readonly<Record<string, AuditAction | null>> = {
  // Sign-ins (success and failure), recorded in every organization of the user (audit-recorder.ts).
  createSession: ["user.signed_in", "user", "b.email"],
  issueToken: ["user.signed_in", "user", "b.email"],
  // A public route that only clears the console's cookie: it names no one (the token still expires on its own).
  deleteSession: NOT_A_CHANGE,
  // A SAML sign-in is recorded by its own rule (saml-audit.ts): in the organization whose IdP signed
  // it in, with the user it signed in, success or failure.
  consumeSamlResponse: NOT_A_CHANGE,
  putSamlSettings: ["settings.saml.updated", "organization", "p.id"],
  deleteSamlSettings: ["settings.saml.deleted", "organization", "p.id"],
  // Before the account has an organization: nothing to record it in.
  signUp: NOT_A_CHANGE,
  completeOnboarding: ["organization.created", "organization", "r.organization.id"],
  verifySetup: NOT_A_CHANGE,
  createApiKey: ["api_key.created", "api_key", "r.id"],
  revokeApiKey: ["api_key.revoked", "api_key", "p.id"],
  createOrganization: ["organization.created", "organization", "r.organization.id"],
  updateOrganization: ["organization.settings.updated", "organization", "p.id"],
  addMember: ["member.added", "user", "r.user.id"],
  changeMemberRole: ["member.role.changed", "user", "p.userId"],
  removeMember: ["member.removed", "user", "p.userId"],
  createInvitation: ["invitation.created", "invitation", "r.invitation.id"],
  revokeInvitation: ["invitation.revoked", "invitation", "p.invitationId"],
  acceptInvitation: ["invitation.accepted", "invitation", "r.membership.userId"],
  createScimToken: ["scim_token.created", "scim_token", "r.scimToken.id"],
  revokeScimToken: ["scim_token.revoked", "scim_token", "p.tokenId"],
  createProviderConnection: ["connection.created", "connection", "r.id"],
  updateProviderConnection: ["connection.updated", "connection", "p.id"],
  deleteProviderConnection: ["connection.deleted", "connection", "p.id"],
  testProviderConnection: NOT_A_CHANGE,
  createPrompt: ["prompt.created", "prompt", "r.id"],
  updatePrompt: ["prompt.updated", "prompt", "p.id"],
  createPromptVersion: ["prompt.version.created", "prompt_version", "r.id"],
  publishPromptVersion: ["prompt.version.published", "prompt", "p.id"],
  createTool: ["tool.created", "tool", "r.id"],
  updateTool: ["tool.updated", "tool", "p.id"],
  createToolVersion: ["tool.version.created", "tool_version", "r.id"],
  createSkill: ["skill.created", "skill", "r.id"],
  updateSkill: ["skill.updated", "skill", "p.id"],
  createSkillVersion: ["skill.version.created", "skill_version", "r.id"],
  publishSkillVersion: ["skill.version.published", "skill", "p.id"],
  replaceSkillPrompts: ["skill.version.prompts.replaced", "skill_version", "p.id"],
  replaceSkillTools: ["skill.version.tools.replaced", "skill_version", "p.id"],
  createAgent: ["agent.created", "agent", "r.id"],
  updateAgent: ["agent.updated", "agent", "p.id"],
  createAgentVersion: ["agent.version.created", "agent_version", "r.id"],
  saveAgentWorkflow: ["agent.version.workflow.saved", "agent_version", "p.id"],
  validateAgentWorkflow: NOT_A_CHANGE,
  publishAgentVersion: ["agent.version.published", "agent", "p.id"],
  rollbackAgentVersion: ["agent.version.rolled_back", "agent", "p.id"],
  setPromptLabel: ["prompt.label.moved", "prompt_label", "p.id+p.label"],
  deletePromptLabel: ["prompt.label.deleted", "prompt_label", "p.id+p.label"],
  setSkillLabel: ["skill.label.moved", "skill_label", "p.id+p.label"],
  deleteSkillLabel: ["skill.label.deleted", "skill_label", "p.id+p.label"],
  setAgentLabel: ["agent.label.moved", "agent_label", "p.id+p.label"],
  deleteAgentLabel: ["agent.label.deleted", "agent_label", "p.id+p.label"],
  // Runs are the platform's work, not changes to what an organization configures (the hot path).
  runPrompt: NOT_A_CHANGE,
  runSkill: NOT_A_CHANGE,
  previewSkill: NOT_A_CHANGE,
  streamPromptRun: NOT_A_CHANGE,
  runAgent: NOT_A_CHANGE,
  rerunAgentFromStep: NOT_A_CHANGE,
  loadAgentRunInputs: NOT_A_CHANGE,
  createEvaluationCases: ["evaluation_case.created", "skill", "p.id"],
  updateEvaluationCase: ["evaluation_case.updated", "evaluation_case", "p.caseId"],
  deleteEvaluationCase: ["evaluation_case.deleted", "evaluation_case", "p.caseId"],
  startEvaluationRun: ["evaluation.started", "evaluation_run", "r.id"],
  cancelEvaluationRun: ["evaluation.cancelled", "evaluation_run", "p.evaluationRunId"],
  createWebhook: ["webhook.created", "webhook", "r.id"],
  updateWebhook: ["webhook.updated", "webhook", "p.id"],
  deleteWebhook: ["webhook.deleted", "webhook", "p.id"],
  rotateWebhookSecret: ["webhook.secret.rotated", "webhook", "p.id"],
  testWebhook: NOT_A_CHANGE,
  redeliverWebhookDelivery: ["webhook.delivery.redelivered", "webhook_delivery", "p.deliveryId"],
  createBudget: ["budget.created", "budget", "r.id"],
  updateBudget: ["budget.updated", "budget", "p.id"],
  deleteBudget: ["budget.deleted", "budget", "p.id"],
  createModelRoute: ["route.created", "route", "r.id"],
  updateModelRoute: ["route.updated", "route", "p.id"],
  deleteModelRoute: ["route.deleted", "route", "p.id"],
  createOnlineRule: ["online_rule.created", "online_rule", "r.id"],
  updateOnlineRule: ["online_rule.updated", "online_rule", "p.id"],
  deleteOnlineRule: ["online_rule.deleted", "online_rule", "p.id"],
  createAnnotationQueue: ["queue.created", "queue", "r.id"],
  updateAnnotationQueue: ["queue.updated", "queue", "p.id"],
  deleteAnnotationQueue: ["queue.deleted", "queue", "p.id"],
  addAnnotationQueueItems: ["queue.items.added", "queue", "p.id"],
  claimNextAnnotationQueueItem: ["queue.item.claimed", "queue", "p.id"],
  reviewAnnotationQueueItem: ["queue.item.reviewed", "queue_item", "p.itemId"],
  skipAnnotationQueueItem: ["queue.item.skipped", "queue_item", "p.itemId"],
  releaseAnnotationQueueItem: ["queue.item.released", "queue_item", "p.itemId"],
  createCaseFromAnnotationQueueItem: ["queue.item.case_created", "queue_item", "p.itemId"],
  createDataset: ["dataset.created", "dataset", "r.id"],
  updateDataset: ["dataset.updated", "dataset", "p.id"],
  deleteDataset: ["dataset.deleted", "dataset", "p.id"],
  addDatasetItems: ["dataset.items.added", "dataset", "p.id"],
  removeDatasetItem: ["dataset.item.removed", "dataset_item", "p.itemId"],
  addDatasetItemsFrom: ["dataset.items.added", "dataset", "p.id"],
  updateTraceSettings: ["settings.traces.updated", "organization", "q.organizationId"],
  importDatasetItems: ["dataset.items.imported", "dataset", "p.id"],
  importOrganization: ["organization.imported", "organization", "p.id"],
};

/** Operations whose refusal is recorded too: a failed sign-in. */
export const AUDITED_FAILURES: ReadonlySet<string> = new Set(["createSession", "issueToken"]);
