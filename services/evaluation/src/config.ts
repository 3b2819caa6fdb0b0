import { BusEnv, parseEnv, serviceEnv, Type } from "@kiln/kit/config";
import { hostPatternsOf, WebhookPrivateHostsEnv } from "@kiln/kit/outbound/host-config";
import { createSecretBox, parseSecretKeys } from "@kiln/kit/secret-box";

/** The variables of the evaluation workers (also all a worker-only process reads besides its store and bus). */
export const WorkerEnv = {
  /** Evaluation items one process handles at the same time. */
  EVALUATION_WORKER_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 256, default: 4 }),
  /** Redelivery of an item whose worker went silent (workers report progress well within it). */
  EVALUATION_ACK_WAIT_MS: Type.Integer({ minimum: 1_000, maximum: 3_600_000, default: 30_000 }),
  EXECUTION_URL: Type.String({ minLength: 1 }),
  /** Hosts webhook URLs may resolve to private, loopback or link-local addresses for (host patterns). */
  ...WebhookPrivateHostsEnv,
  /** Deadline of one webhook delivery attempt. */
  WEBHOOK_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 10_000, default: 10_000 }),
  /** Redelivery of a webhook delivery whose dispatcher went silent (died mid-attempt). */
  WEBHOOK_ACK_WAIT_MS: Type.Integer({ minimum: 1_000, maximum: 300_000, default: 30_000 }),
  /** First retry of a failed delivery after about this long, doubling per attempt up to an hour. */
  WEBHOOK_RETRY_BASE_MS: Type.Integer({ minimum: 100, maximum: 3_600_000, default: 5_000 }),
  /** Seals webhook signing secrets at rest: 32 bytes in base64 or hex, the same in every process (docs/operations.md "Secret key"). */
  KILN_SECRET_KEY: Type.String({ minLength: 1 }),
  /** Keys KILN_SECRET_KEY replaced, comma-separated: they still open what they sealed until the next start re-seals it. */
  KILN_SECRET_KEY_PREVIOUS: Type.String({ default: "" }),
};

/** The webhook options of the environment (both process kinds run a dispatcher); a malformed key throws, naming the variable. */
export function webhookOptionsOf(config: {
  WEBHOOK_PRIVATE_HOSTS: string;
  WEBHOOK_TIMEOUT_MS: number;
  WEBHOOK_ACK_WAIT_MS: number;
  WEBHOOK_RETRY_BASE_MS: number;
  KILN_SECRET_KEY: string;
  KILN_SECRET_KEY_PREVIOUS: string;
  WEBHOOK_DELIVERY_RETENTION_DAYS?: number;
}) {
  return {
    privateHosts: hostPatternsOf("WEBHOOK_PRIVATE_HOSTS", config.WEBHOOK_PRIVATE_HOSTS),
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
    ackWaitMs: config.WEBHOOK_ACK_WAIT_MS,
    retry: { baseDelayMs: config.WEBHOOK_RETRY_BASE_MS },
    secrets: createSecretBox(parseSecretKeys(config.KILN_SECRET_KEY, config.KILN_SECRET_KEY_PREVIOUS)),
    ...(config.WEBHOOK_DELIVERY_RETENTION_DAYS !== undefined && {
      deliveryRetentionMs: config.WEBHOOK_DELIVERY_RETENTION_DAYS * 24 * 3_600_000,
    }),
  };
}

/** Human review's variables (docs/review.md), read by the evaluation process and by `pnpm start`. */
export const ReviewEnv = {
  /** How long a claimed annotation queue item stays with its reviewer (docs/review.md "Claiming"). */
  REVIEW_LEASE_MS: Type.Integer({ minimum: 1_000, maximum: 86_400_000, default: 600_000 }),
};

/** The review options of the environment. */
export const reviewOptionsOf = (config: { REVIEW_LEASE_MS: number }) => ({ leaseMs: config.REVIEW_LEASE_MS });

export const EvaluationEnv = Type.Object({
  ...serviceEnv({ port: 7004, database: "kiln_evaluation" }),
  ...BusEnv,
  ...WorkerEnv,
  IDENTITY_URL: Type.String({ minLength: 1 }),
  CATALOG_URL: Type.String({ minLength: 1 }),
  /** Run a webhook dispatcher in this process beside its workers (false: only evaluation-worker processes deliver). */
  WEBHOOK_DISPATCHER: Type.Boolean({ default: true }),
  ...ReviewEnv,
  /** Days a webhook delivery is kept after it was made or last redelivered. */
  WEBHOOK_DELIVERY_RETENTION_DAYS: Type.Integer({ minimum: 1, maximum: 3_650, default: 30 }),
  /** Days an online evaluation score is kept after it was stored. */
  ONLINE_SCORE_RETENTION_DAYS: Type.Integer({ minimum: 1, maximum: 3_650, default: 90 }),
});

export const EvaluationWorkerEnv = Type.Object({
  /** PORT: its health endpoints only (grpc.health.v1, /healthz, /readyz over h2c): it serves no RPC. */
  ...serviceEnv({ port: 7005, database: "kiln_evaluation" }),
  ...BusEnv,
  ...WorkerEnv,
});

/** The only reader of the environment in the evaluation service. */
export function loadConfig(env: Record<string, string | undefined> = process.env) {
  return parseEnv(EvaluationEnv, env);
}

/** The configuration of a worker-only process (worker-main.ts): a health port, no identity, no catalog. */
export function loadWorkerConfig(env: Record<string, string | undefined> = process.env) {
  return parseEnv(EvaluationWorkerEnv, env);
}
