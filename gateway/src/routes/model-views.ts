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
    pricing: Type.Object({ inputPerMTokUsd: Nullable(Type.Number()), outputPerMTokUsd: Nullable(Type.Number()) }),
    connectionId: Type.Optional(
      Type.String({ description: "the organization's provider connection of the model; absent for the deployment's" }),
    ),
  },
  { $id: "Model" },
);
