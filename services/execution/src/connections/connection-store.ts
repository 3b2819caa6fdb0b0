/**
 * The `provider_connections` collection (docs/providers.md "Connections"): one document per
 * connection, unique by (organizationId, name); every read and write names the organization or
 * is followed by a check of the document's organization against the caller's.
 */

import type { Collection, Store } from "@kiln/kit/store";
import type { ConnectionSettings, OpenAIApi, ProviderKind } from "@kiln/models/factories";

/** One model of a connection; its id is "<connection name>/<model>". */
export interface ConnectionModelDoc {
  model: string;
  inputPerMTokUsd: number | null;
  outputPerMTokUsd: number | null;
  cachedInputPerMTokUsd: number | null;
  cacheWritePerMTokUsd: number | null;
  reasoningPerMTokUsd: number | null;
  capabilities: { tools: boolean; jsonSchema: boolean; input: ("text" | "image")[] };
  /** The OpenAI API it is called through, when the caller named one (OpenAI-protocol kinds); absent: the kind's default. */
  api?: OpenAIApi;
  /** Tokens a minute this connection's runs on it may use (docs/usage.md); absent or null: no limit. */
  tokensPerMinute?: number | null;
}

export interface ProviderConnectionDoc {
  _id: string;
  organizationId: string;
  name: string;
  provider: ProviderKind;
  /** "" = the provider's public endpoint. */
  baseUrl: string;
  /** Sealed with KILN_SECRET_KEY (the context `<id>:apiKey`); null without a key. Never answered. */
  apiKey: string | null;
  /** "…abcd", or "" without a key. */
  apiKeyHint: string;
  /** bedrock: sealed likewise (`<id>:secretAccessKey`). */
  secretAccessKey: string | null;
  /** The kind's settings, the secret one left out. */
  settings: Omit<ConnectionSettings, "secretAccessKey">;
  models: ConnectionModelDoc[];
  createdAt: Date;
  updatedAt: Date;
}

export const connectionCollection = (store: Store): Collection<ProviderConnectionDoc> =>
  store.collection("provider_connections");

export async function ensureConnectionIndexes(store: Store): Promise<void> {
  await store.ensureIndexes("provider_connections", [
    { keys: { organizationId: 1, name: 1 }, unique: true },
    { keys: { organizationId: 1, _id: -1 } },
  ]);
}

/** The context a secret of a connection is sealed with: a sealed value copied onto another document does not open. */
export const secretContext = (id: string, field: "apiKey" | "secretAccessKey") => `${id}:${field}`;

/** What a key is shown as after creation: its last four characters. */
export const hintOf = (key: string): string => (key.length >= 8 ? `…${key.slice(-4)}` : "…");
