/**
 * Every name on the bus (docs/architecture.md "Bus", api.md "Events"): the streams, the subjects
 * published on them and the durable consumers that read them. They are wire values, shared by the
 * processes that publish and those that consume (and by deployments' NATS configuration, with
 * NATS_PREFIX in front): a change here is a change of the wire, never a rename. Each stream's
 * settings (retention, age, de-duplication window) stay with the module that owns it.
 */

/** run.completed, one per stored run: published by execution; webhooks, usage, online evaluation and review read it. */
export const RUN_EVENTS = {
  stream: "RUNS",
  subjects: ["runs.>"],
  /** Every run kind's run.completed (the filter of its consumers). */
  completed: "runs.completed.*",
} as const;

/** The subject of a run's run.completed: `runs.completed.<kind>`. */
export const runCompletedSubject = (kind: string) => `runs.completed.${kind}`;

/** The catalog's events: a version created, a publish, a label moved. */
export const CATALOG_EVENTS = { stream: "CATALOG", subjects: ["catalog.>"] } as const;

/** The subject of a catalog event: `catalog.<type>`. */
export const catalogSubject = (type: string) => `catalog.${type}`;

/** trace.ingested, one per trace an ingestion stored generation spans of: online evaluation reads it. */
export const TRACE_EVENTS = {
  stream: "TRACE_EVENTS",
  subjects: ["trace-events.>"],
  ingested: "trace-events.ingested",
} as const;

/** evaluation.completed: webhooks read it. */
export const EVALUATION_EVENTS = {
  stream: "EVALUATION_EVENTS",
  subjects: ["evaluation-events.>"],
  completed: "evaluation-events.completed",
} as const;

/** budget.threshold_reached (the execution service's usage events): webhooks read it. */
export const USAGE_EVENTS = {
  stream: "USAGE_EVENTS",
  subjects: ["usage-events.>"],
  budget: "usage-events.budget",
} as const;

/** Work queues: each message is taken by one consumer of the module that owns it. */
export const WORK_QUEUES = {
  /** A webhook delivery due (libs/webhooks). */
  webhooks: { stream: "WEBHOOKS", subject: "webhooks.deliver" },
  /** One attempt of an evaluation case on one target. */
  evaluations: { stream: "EVALUATIONS", subject: "evaluations.work" },
  /** One online scoring job: a rule and the run or the generation span it scores. */
  onlineScores: {
    stream: "ONLINE_SCORES",
    subjects: ["online-scores.>"],
    run: "online-scores.run",
    generation: "online-scores.generation",
  },
} as const;

/** Change counters (kit/bus/generation.ts): a stream each, its last sequence the counter. */
export const GENERATIONS = {
  catalog: { stream: "CATALOG_GENERATION", subject: "catalog-generation" },
  providerConnections: { stream: "PROVIDER_CONNECTIONS_GENERATION", subject: "provider-connections-generation" },
  evaluationRules: { stream: "EVALUATION_RULES_GENERATION", subject: "evaluation-rules-generation" },
} as const;

/**
 * The durable consumers, by reader. A stream delivers each message once per durable name, so two
 * readers sharing a name on one stream would split its messages: each name here has one reader
 * per stream (every replica of that reader shares it).
 */
export const CONSUMERS = {
  /** libs/webhooks: one per source stream (RUNS, CATALOG, EVALUATION_EVENTS, USAGE_EVENTS). */
  webhookFanout: "webhook-fanout",
  /** libs/webhooks: the deliveries' work queue. */
  webhookDispatchers: "webhook-dispatchers",
  /** execution: run.completed into the usage ledger. */
  usageLedger: "usage-ledger",
  /** evaluation: online evaluation's intake, on RUNS and TRACE_EVENTS. */
  onlineEvaluation: "online-evaluation",
  /** evaluation: the online scoring jobs. */
  onlineScorers: "online-scorers",
  /** evaluation: annotation queues' auto-add rules, on RUNS. */
  annotationQueueRules: "annotation-queue-rules",
  /** evaluation: the evaluation work queue, every worker of every replica. */
  evaluationWorkers: "evaluation-workers",
} as const;
