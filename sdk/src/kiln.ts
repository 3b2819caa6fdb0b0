import { AgentRuns, Agents } from "./agents.js";
import { AnnotationQueues } from "./annotation-queues.js";
import { AuditLog } from "./audit-log.js";
import { Budgets } from "./budgets.js";
import { Bundles } from "./bundles.js";
import { Datasets } from "./datasets.js";
import { Evaluations, JudgeRuns } from "./evaluations.js";
import { Models } from "./models.js";
import { Onboarding } from "./onboarding.js";
import { OnlineRules, Scores } from "./online-evaluation.js";
import { PromptEvaluations } from "./prompt-evaluations.js";
import { Prompts } from "./prompts.js";
import { ProviderConnections } from "./provider-connections.js";
import { Setup } from "./setup.js";
import { SkillRuns, Skills } from "./skills.js";
import { Tools } from "./tools.js";
import { Sessions, Traces } from "./traces.js";
import { type KilnOptions, Transport } from "./transport.js";
import { Webhooks } from "./webhooks.js";

/**
 * The Kiln API client: `new Kiln({ baseUrl, accessToken })` or `new Kiln({ baseUrl, apiKey })`,
 * with one property per route family of the public contract (docs/api.md "Stability").
 */
export class Kiln {
  readonly prompts: Prompts;
  readonly tools: Tools;
  readonly skills: Skills;
  readonly skillRuns: SkillRuns;
  readonly agents: Agents;
  readonly agentRuns: AgentRuns;
  readonly evaluations: Evaluations;
  readonly judgeRuns: JudgeRuns;
  readonly promptEvaluations: PromptEvaluations;
  readonly models: Models;
  readonly setup: Setup;
  readonly onboarding: Onboarding;
  readonly webhooks: Webhooks;
  readonly budgets: Budgets;
  readonly providerConnections: ProviderConnections;
  readonly bundles: Bundles;
  readonly traces: Traces;
  readonly sessions: Sessions;
  readonly onlineRules: OnlineRules;
  readonly scores: Scores;
  readonly annotationQueues: AnnotationQueues;
  readonly datasets: Datasets;
  readonly auditLog: AuditLog;

  constructor(options: KilnOptions) {
    const transport = new Transport(options);
    this.prompts = new Prompts(transport);
    this.tools = new Tools(transport);
    this.skills = new Skills(transport);
    this.skillRuns = new SkillRuns(transport);
    this.agents = new Agents(transport);
    this.agentRuns = new AgentRuns(transport);
    this.evaluations = new Evaluations(transport);
    this.judgeRuns = new JudgeRuns(transport);
    this.promptEvaluations = new PromptEvaluations(transport);
    this.models = new Models(transport);
    this.setup = new Setup(transport);
    this.onboarding = new Onboarding(transport);
    this.webhooks = new Webhooks(transport);
    this.budgets = new Budgets(transport);
    this.providerConnections = new ProviderConnections(transport);
    this.bundles = new Bundles(transport);
    this.traces = new Traces(transport);
    this.sessions = new Sessions(transport);
    this.onlineRules = new OnlineRules(transport);
    this.scores = new Scores(transport);
    this.annotationQueues = new AnnotationQueues(transport);
    this.datasets = new Datasets(transport);
    this.auditLog = new AuditLog(transport);
  }
}
