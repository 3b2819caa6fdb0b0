/**
 * The models of a connection made from its provider's model list (create without `models`,
 * /test of a connection without any): the kind's default capabilities, and for OpenAI's own
 * models the catalog's list prices and image input where the catalog knows the model.
 */
import { OPENAI_BUILT_IN_MODELS } from "@kiln/models/catalog";
import { modelsOf } from "./connection-rules.js";
import type { ConnectionModelDoc, ProviderConnectionDoc } from "./connection-store.js";

export function discoveredModels(doc: ProviderConnectionDoc, names: readonly string[]): ConnectionModelDoc[] {
  const known = new Map(doc.provider === "openai" ? OPENAI_BUILT_IN_MODELS.map((m) => [m.model, m]) : []);
  const inputs = [...new Set(names)].map((model) => {
    const entry = known.get(model);
    return entry
      ? {
          model,
          inputPerMTokUsd: entry.pricing.inputPerMTokUsd ?? undefined,
          outputPerMTokUsd: entry.pricing.outputPerMTokUsd ?? undefined,
          capabilities: { input: entry.capabilities.input },
        }
      : { model };
  });
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
