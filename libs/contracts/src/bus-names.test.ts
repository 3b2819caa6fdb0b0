import { describe, expect, it } from "vitest";
import {
  CATALOG_EVENTS,
  CONSUMERS,
  catalogSubject,
  EVALUATION_EVENTS,
  GENERATIONS,
  RUN_EVENTS,
  runCompletedSubject,
  TRACE_EVENTS,
  USAGE_EVENTS,
  WORK_QUEUES,
} from "./bus-names.js";

/**
 * The names are the wire (deployed streams and durable consumers keep them, docs/events/*.schema.json
 * name the subjects): written out here, so that a change to one is a failing test, never a rename.
 */
describe("the names on the bus", () => {
  it("are the streams and subjects deployments have", () => {
    expect([RUN_EVENTS, CATALOG_EVENTS, TRACE_EVENTS, EVALUATION_EVENTS, USAGE_EVENTS]).toEqual([
      { stream: "RUNS", subjects: ["runs.>"], completed: "runs.completed.*" },
      { stream: "CATALOG", subjects: ["catalog.>"] },
      { stream: "TRACE_EVENTS", subjects: ["trace-events.>"], ingested: "trace-events.ingested" },
      { stream: "EVALUATION_EVENTS", subjects: ["evaluation-events.>"], completed: "evaluation-events.completed" },
      { stream: "USAGE_EVENTS", subjects: ["usage-events.>"], budget: "usage-events.budget" },
    ]);
    expect(runCompletedSubject("prompt")).toBe("runs.completed.prompt");
    expect(catalogSubject("label.moved")).toBe("catalog.label.moved");
    expect(WORK_QUEUES).toEqual({
      webhooks: { stream: "WEBHOOKS", subject: "webhooks.deliver" },
      evaluations: { stream: "EVALUATIONS", subject: "evaluations.work" },
      onlineScores: {
        stream: "ONLINE_SCORES",
        subjects: ["online-scores.>"],
        run: "online-scores.run",
        generation: "online-scores.generation",
      },
    });
    expect(GENERATIONS).toEqual({
      catalog: { stream: "CATALOG_GENERATION", subject: "catalog-generation" },
      providerConnections: { stream: "PROVIDER_CONNECTIONS_GENERATION", subject: "provider-connections-generation" },
      evaluationRules: { stream: "EVALUATION_RULES_GENERATION", subject: "evaluation-rules-generation" },
    });
  });

  it("are the durable consumers deployments have, one reader each", () => {
    expect(CONSUMERS).toEqual({
      webhookFanout: "webhook-fanout",
      webhookDispatchers: "webhook-dispatchers",
      usageLedger: "usage-ledger",
      onlineEvaluation: "online-evaluation",
      onlineScorers: "online-scorers",
      annotationQueueRules: "annotation-queue-rules",
      evaluationWorkers: "evaluation-workers",
    });
    expect(new Set(Object.values(CONSUMERS)).size).toBe(Object.keys(CONSUMERS).length);
  });
});
