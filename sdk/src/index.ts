/** The package's public API. */

export type { components, operations, paths } from "./gen/kiln-api.js";
export { Kiln } from "./kiln.js";
export { type ErrorCode, type ErrorDetail, KilnError, KilnTimeoutError } from "./kiln-error.js";
export type { LabelTarget } from "./labels.js";
export { type Page, PaginatedList } from "./paginated-list.js";
export type { WaitOptions } from "./poll-until.js";
export type {
  PromptFallback,
  PromptMessage,
  RenderedPrompt,
  RenderedResponseFormat,
  ResolvedPrompt,
  ResolvePromptOptions,
} from "./resolved-prompt.js";
export type * from "./resources.js";
export type { IdempotentRequestOptions, KilnOptions, RequestOptions } from "./transport.js";
