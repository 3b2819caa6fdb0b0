/**
 * The maximum of every size a caller chooses (docs/api.md "Limits"): one table, read by the
 * gateway's route schemas (checked before any service works) and by the services' own checks (so
 * that an internal RPC caller meets the same bounds). Text limits count UTF-16 code units
 * (JavaScript's `length`, what a browser's `maxlength` counts); JSON limits count the bytes of the
 * value's JSON text in UTF-8.
 *
 * The sizes are chosen so that the largest accepted input is served within each process's heap
 * bound with room to spare, 16 at a time (docs/operations.md "Memory headroom" has the measurement).
 */
export const LIMITS = {
  /** A JSON request body under /api and /v1. */
  bodyBytes: 1024 * 1024,
  /** A bundle or promptfoo import (JSON or YAML). */
  importBytes: 8 * 1024 * 1024,
  /** Objects and arrays nested in a request body. */
  bodyDepth: 64,

  /** Names of prompts, tools, skills, agents, cases, API keys, webhooks… */
  nameChars: 200,
  /** Descriptions. */
  descriptionChars: 2_000,
  /** A version's change message. */
  changeMessageChars: 1_000,
  /** A prompt version's system or developer prompt (a template). */
  promptTextChars: 100_000,
  /** Messages of one chat prompt version (its placeholders included). */
  promptMessages: 100,

  /** A JSON Schema: variables, response format, a tool's input schema, an agent's inputs. */
  jsonSchemaBytes: 64 * 1024,
  /** Levels of nesting inside a JSON Schema. */
  jsonSchemaDepth: 64,
  /** A tool's configuration, a `manual_stub` result included. */
  toolConfigBytes: 256 * 1024,
  /** An agent version's workflow. */
  workflowBytes: 256 * 1024,
  /** The variables (or input) of one run, preview or evaluation case. */
  variablesBytes: 256 * 1024,
  /** An evaluation case's expected output. */
  expectedOutputBytes: 256 * 1024,
  /** An evaluation case's assertions, all together. */
  assertionsBytes: 64 * 1024,
  /** Assertions of one case. */
  assertionsPerCase: 50,
  /** Cases created in one request. */
  casesPerRequest: 500,
  /** Free text inside an assertion (expected text, a pattern, a rubric). */
  assertionTextChars: 10_000,
  /** Tools attached to one prompt or skill version. */
  toolsPerVersion: 50,
  /** Prompts composed into one skill version. */
  promptsPerSkill: 50,
  /** A webhook's URL. */
  webhookUrlChars: 2_048,
  /** Scores in an annotation queue's set; options of a categorical score. */
  scoresPerQueue: 20,
  scoreOptions: 20,
  /** Runs and traces added to an annotation queue in one request. */
  itemsPerAdd: 100,
  /** A review's comment. */
  reviewCommentChars: 10_000,
  /** Items added to a dataset in one request (sent, imported or copied from elsewhere). */
  datasetItemsPerRequest: 1_000,
  /** Ids of evaluation cases, runs and annotation items copied into a dataset in one request, together. */
  datasetSourcesPerRequest: 100,
  /** Items of a dataset at one version (what one evaluation of it runs). */
  datasetItems: 10_000,
  /** A dataset item's metadata. */
  datasetMetadataBytes: 16 * 1024,
  /** `Kiln-Cache: ttl=<seconds>` (docs/cache.md): 7 days. */
  cacheTtlSeconds: 7 * 24 * 3600,
  /** An answer the response cache keeps (its output's JSON text): a larger one is not kept. */
  cacheEntryBytes: 256 * 1024,
} as const;

export type LimitName = keyof typeof LIMITS;

/** The size of a value's JSON text in UTF-8 bytes (what the JSON limits count). */
export function jsonBytes(value: unknown): number {
  return value === undefined ? 0 : Buffer.byteLength(JSON.stringify(value) ?? "", "utf8");
}

/** A human reading of a byte limit: "256 KiB", "1 MiB". */
export function bytesText(bytes: number): string {
  if (bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}
