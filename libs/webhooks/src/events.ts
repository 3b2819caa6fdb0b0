/**
 * The events webhooks deliver and where they come from on the bus: run.completed (stream RUNS),
 * the catalog's (stream CATALOG), evaluation.completed (stream EVALUATION_EVENTS) and
 * budget.threshold_reached (stream USAGE_EVENTS, the execution service's). Each becomes
 * the one webhook payload shape `{id, type, organizationId, timestamp, data}` (docs/webhooks.md).
 */
import { CATALOG_EVENTS, CONSUMERS, EVALUATION_EVENTS, RUN_EVENTS, USAGE_EVENTS } from "@kiln/contracts/bus-names";
import type { BusMessage, ConsumerSpec } from "@kiln/kit/bus";

export const WEBHOOK_EVENTS = [
  "run.completed",
  "prompt.version.created",
  "prompt.published",
  "skill.published",
  "agent.published",
  "label.moved",
  "evaluation.completed",
  "budget.threshold_reached",
] as const;

export type WebhookEventType = (typeof WEBHOOK_EVENTS)[number];

export interface WebhookEvent {
  id: string;
  type: WebhookEventType | "webhook.test";
  organizationId: string;
  timestamp: string;
  data: Record<string, unknown>;
}

/** The durable consumers of the fan-out, one per source stream, shared by every dispatcher. */
export const SOURCES: ConsumerSpec[] = [
  { stream: RUN_EVENTS.stream, durable: CONSUMERS.webhookFanout, filterSubject: RUN_EVENTS.completed },
  { stream: CATALOG_EVENTS.stream, durable: CONSUMERS.webhookFanout },
  { stream: EVALUATION_EVENTS.stream, durable: CONSUMERS.webhookFanout },
  { stream: USAGE_EVENTS.stream, durable: CONSUMERS.webhookFanout },
];

const isType = (t: unknown): t is WebhookEventType => (WEBHOOK_EVENTS as readonly unknown[]).includes(t);

/** The webhook event a bus message carries, or undefined for one webhooks do not deliver (judge runs). */
export function webhookEventOf(msg: Pick<BusMessage, "subject" | "json">): WebhookEvent | undefined {
  const body = msg.json<Record<string, unknown>>();
  if (/(^|\.)runs\.completed\.[^.]+$/.test(msg.subject)) {
    if (body.kind === "judge") return undefined;
    return {
      id: `run.completed:${String(body.runId)}`,
      type: "run.completed",
      organizationId: String(body.organizationId),
      timestamp: String(body.completedAt),
      data: body,
    };
  }
  if (!isType(body.type) || typeof body.id !== "string") return undefined;
  return {
    id: body.id,
    type: body.type,
    organizationId: String(body.organizationId),
    timestamp: String(body.occurredAt),
    data: (body.data ?? {}) as Record<string, unknown>,
  };
}
