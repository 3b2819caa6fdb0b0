/**
 * Which connection kinds can say what models they serve, and how (docs/providers.md "Connections",
 * "Discovery"): the lister of each kind that has a list endpoint. `azure_openai` has none that
 * fits: its calls name deployments the operator made, and the resource's model list
 * (`/openai/models`) names the models it could deploy, not the deployments.
 */
import { listAnthropicModels } from "./anthropic-model-list.js";
import { listBedrockModels } from "./bedrock-model-list.js";
import { listGeminiModels } from "./gemini-model-list.js";
import type { ModelLister } from "./model-list.js";
import { openAIModelLister } from "./openai-model-list.js";
import type { ProviderKind } from "./provider-kinds.js";

export type { ListedModel, ModelLister, ModelListRequest } from "./model-list.js";

const LISTERS: Partial<Record<ProviderKind, ModelLister>> = {
  openai: openAIModelLister("openai"),
  openai_compatible: openAIModelLister("openai_compatible"),
  anthropic: listAnthropicModels,
  gemini: listGeminiModels,
  bedrock: listBedrockModels,
};

/** The lister of a kind, or undefined when the kind's models are named by the operator only. */
export const modelListerOf = (kind: ProviderKind): ModelLister | undefined => LISTERS[kind];
