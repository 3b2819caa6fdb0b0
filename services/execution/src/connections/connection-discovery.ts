/**
 * The models of a connection made from its provider's model list (create without `models`,
 * /test of a connection without any): what each listed model's input may carry, the catalog's
 * list prices where the catalog knows the model (@kiln/models/model-lists), the kind's default
 * capabilities otherwise.
 */
import type { ListedModel } from "@kiln/models/model-lists";
import { modelsOf } from "./connection-rules.js";
import type { ConnectionModelDoc, ProviderConnectionDoc } from "./connection-store.js";

export function discoveredModels(doc: ProviderConnectionDoc, listed: readonly ListedModel[]): ConnectionModelDoc[] {
  const seen = new Set<string>();
  const inputs = listed
    .filter((m) => !seen.has(m.model) && seen.add(m.model))
    .map((m) => ({
      model: m.model,
      inputPerMTokUsd: m.pricing?.inputPerMTokUsd ?? undefined,
      outputPerMTokUsd: m.pricing?.outputPerMTokUsd ?? undefined,
      cachedInputPerMTokUsd: m.pricing?.cachedInputPerMTokUsd ?? undefined,
      cacheWritePerMTokUsd: m.pricing?.cacheWritePerMTokUsd ?? undefined,
      reasoningPerMTokUsd: m.pricing?.reasoningPerMTokUsd ?? undefined,
      capabilities: { input: [...m.input] },
    }));
  const { models, issues } = modelsOf(doc.provider, inputs);
  // A listed name the rules refuse (too long, odd characters) is left out rather than failing the list.
  const refused = new Set(
    issues
      .map((i) => /^models\[(\d+)\]/.exec(i.field)?.[1])
      .filter(Boolean)
      .map(Number),
  );
  return models.filter((_, i) => !refused.has(i));
}
