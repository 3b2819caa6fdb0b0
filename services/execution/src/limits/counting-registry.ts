/**
 * The model side of token-per-minute limits (token-limits.ts): the registry every run resolves its
 * models through, with each model that has a limit counting the tokens of each of its calls in its
 * window as the call answers. A route's targets resolve through it too, so the target that answered
 * is the one that counts; a model without a limit is handed back untouched.
 */
import type { ProviderRegistry } from "@kiln/models/registry";
import { modelLimitOf, type TokenLimits, tokensOf } from "./token-limits.js";

export function countingRegistry(models: ProviderRegistry, limits: Pick<TokenLimits, "counted">): ProviderRegistry {
  return {
    ...models,
    async resolve(modelId, scope) {
      const model = await models.resolve(modelId, scope);
      const limit = modelLimitOf(model);
      if (!limit) return model;
      return {
        ...model,
        generate: async (request) => {
          const result = await model.generate(request);
          limits.counted(limit, tokensOf(result.usage));
          return result;
        },
      };
    },
  };
}
