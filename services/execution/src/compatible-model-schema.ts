/** The schema of one model of OPENAI_COMPATIBLE_PROVIDERS (config.ts). */
import { MAX_TOKENS_PER_MINUTE } from "@kiln/contracts/token-limits";
import { Type } from "@kiln/kit/config";

const Price = Type.Union([Type.Number({ minimum: 0 }), Type.Null()]);

/**
 * A compatible endpoint's model: its prices, USD per million tokens of each class (unset: input
 * and output unknown, cached input and cache writes at the input price, reasoning at the output
 * price: docs/providers.md "How usage is priced"), its capabilities (each false unless set), the
 * OpenAI API it is called through, and the tokens a minute every organization's runs on it may use together (docs/usage.md
 * "Token-per-minute limits"; unset: no limit).
 */
export const CompatibleModelSchema = Type.Object(
  {
    model: Type.String({ minLength: 1 }),
    inputPerMTokUsd: Type.Optional(Price),
    outputPerMTokUsd: Type.Optional(Price),
    cachedInputPerMTokUsd: Type.Optional(Price),
    cacheWritePerMTokUsd: Type.Optional(Price),
    reasoningPerMTokUsd: Type.Optional(Price),
    tools: Type.Optional(Type.Boolean()),
    jsonSchema: Type.Optional(Type.Boolean()),
    /** Whether the model takes image parts in user messages (capabilities.input "image"). */
    images: Type.Optional(Type.Boolean()),
    /** The OpenAI API the model is called through; default Chat Completions (docs/providers.md "OpenAI's Responses API"). */
    api: Type.Optional(Type.Union([Type.Literal("chat_completions"), Type.Literal("responses")])),
    tokensPerMinute: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_TOKENS_PER_MINUTE })),
  },
  { additionalProperties: false },
);
