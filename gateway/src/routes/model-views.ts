import Type from "typebox";
import { Nullable, OneOf } from "../schemas.js";

/** The view of one model of the model catalog (GET /api/models). */

export const ModelView = Type.Object(
  {
    id: Type.String({ description: '"<provider>/<model>", e.g. "local/echo"' }),
    provider: Type.String(),
    model: Type.String(),
    available: Type.Boolean({ description: "whether this deployment has credentials for the provider" }),
    capabilities: Type.Object({
      tools: Type.Boolean(),
      jsonSchema: Type.Boolean(),
      input: Type.Array(OneOf(["text", "image"]), {
        description: 'What user messages may carry: "text", and "image" for a model that takes image parts',
      }),
    }),
    pricing: Type.Object(
      {
        inputPerMTokUsd: Nullable(Type.Number({ description: "USD per million input tokens; null: unpriced" })),
        outputPerMTokUsd: Nullable(Type.Number({ description: "USD per million output tokens; null: unpriced" })),
        cachedInputPerMTokUsd: Type.Optional(
          Type.Number({ description: "per million cached input tokens; absent: priced at inputPerMTokUsd" }),
        ),
        cacheWritePerMTokUsd: Type.Optional(
          Type.Number({ description: "per million cache-write input tokens; absent: priced at inputPerMTokUsd" }),
        ),
        reasoningPerMTokUsd: Type.Optional(
          Type.Number({ description: "per million reasoning tokens; absent: priced at outputPerMTokUsd" }),
        ),
      },
      { description: 'docs/providers.md "How usage is priced"' },
    ),
    connectionId: Type.Optional(
      Type.String({ description: "the organization's provider connection of the model; absent for the deployment's" }),
    ),
    tokensPerMinute: Type.Optional(
      Type.Integer({ description: "tokens a minute the runs on it may use (docs/usage.md); absent: no limit" }),
    ),
  },
  { $id: "Model" },
);
