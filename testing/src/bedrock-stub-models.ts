/**
 * The Bedrock stub's control plane list, ListFoundationModels (`GET /foundation-models`), as the
 * Bedrock API reference describes it: `FoundationModelSummary`s filtered by `byProvider`,
 * `byCustomizationType`, `byOutputModality` and `byInferenceType` (an unknown value is 400
 * ValidationException), answered `{modelSummaries}` in one page.
 */

export interface BedrockStubModel {
  modelId: string;
  providerName?: string;
  input?: string[];
  output?: string[];
  inferenceTypes?: string[];
  status?: "ACTIVE" | "LEGACY";
}

export const DEFAULT_BEDROCK_MODELS: BedrockStubModel[] = [
  { modelId: "amazon.nova-micro-v1:0" },
  { modelId: "amazon.nova-lite-v1:0", input: ["TEXT", "IMAGE", "VIDEO"] },
  { modelId: "amazon.nova-pro-v1:0", input: ["TEXT", "IMAGE", "VIDEO"] },
  { modelId: "anthropic.claude-3-5-haiku-20241022-v1:0", providerName: "Anthropic" },
  {
    modelId: "anthropic.claude-sonnet-4-20250514-v1:0",
    providerName: "Anthropic",
    inferenceTypes: ["INFERENCE_PROFILE"],
  },
  { modelId: "amazon.titan-embed-text-v2:0", output: ["EMBEDDING"] },
  { modelId: "amazon.titan-text-express-v1", status: "LEGACY" },
];

const FILTERS: Record<string, string[]> = {
  byCustomizationType: ["FINE_TUNING", "CONTINUED_PRE_TRAINING", "DISTILLATION"],
  byOutputModality: ["TEXT", "IMAGE", "EMBEDDING"],
  byInferenceType: ["ON_DEMAND", "PROVISIONED"],
};

/** The summary of a stub model in `region`. */
export function summaryOf(m: BedrockStubModel, region: string) {
  const provider = m.providerName ?? "Amazon";
  return {
    modelArn: `arn:aws:bedrock:${region}::foundation-model/${m.modelId}`,
    modelId: m.modelId,
    modelName: m.modelId.split(".")[1]?.split(":")[0] ?? m.modelId,
    providerName: provider,
    inputModalities: m.input ?? ["TEXT"],
    outputModalities: m.output ?? ["TEXT"],
    responseStreamingSupported: (m.output ?? ["TEXT"]).includes("TEXT"),
    customizationsSupported: [],
    inferenceTypesSupported: m.inferenceTypes ?? ["ON_DEMAND"],
    modelLifecycle: { status: m.status ?? "ACTIVE" },
  };
}

/** The list for the request's query, or the message of a ValidationException. */
export function foundationModels(
  all: readonly BedrockStubModel[],
  region: string,
  query: Record<string, string>,
): { modelSummaries: ReturnType<typeof summaryOf>[] } | { invalid: string } {
  for (const [name, allowed] of Object.entries(FILTERS)) {
    const value = query[name];
    if (value !== undefined && !allowed.includes(value))
      return {
        invalid: `1 validation error detected: Value '${value}' at '${name}' failed to satisfy constraint: Member must satisfy enum value set: [${allowed.join(", ")}]`,
      };
  }
  const summaries = all
    .map((m) => summaryOf(m, region))
    .filter((s) => query.byProvider === undefined || s.providerName.toLowerCase() === query.byProvider.toLowerCase())
    .filter((s) => query.byOutputModality === undefined || s.outputModalities.includes(query.byOutputModality))
    .filter((s) => query.byInferenceType === undefined || s.inferenceTypesSupported.includes(query.byInferenceType))
    .filter(
      (s) =>
        query.byCustomizationType === undefined ||
        (s.customizationsSupported as string[]).includes(query.byCustomizationType),
    );
  return { modelSummaries: summaries };
}
