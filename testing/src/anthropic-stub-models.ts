/**
 * The Anthropic stub's Models API (`GET /v1/models`), as Anthropic's API reference describes it:
 * the models newest first as `ModelInfo` (the official SDK's type), `limit` from 1 to 1000
 * (default 20), `after_id` / `before_id` cursors, answered `{data, has_more, first_id, last_id}`.
 */
import type { ModelCapabilities, ModelInfo } from "@anthropic-ai/sdk/resources/models";

/** A model the stub lists: its id, and what differs from a current Claude model. */
export interface AnthropicStubModel {
  id: string;
  displayName?: string;
  lifecycle?: ModelInfo["lifecycle"];
  /** Default true. */
  imageInput?: boolean;
  /** `capabilities: null`, as older answers carried. */
  noCapabilities?: boolean;
}

const yes = { supported: true };

function capabilitiesOf(imageInput: boolean): ModelCapabilities {
  return {
    batch: yes,
    citations: yes,
    code_execution: yes,
    context_management: {
      clear_thinking_20251015: yes,
      clear_tool_uses_20250919: yes,
      compact_20260112: null,
      supported: true,
    },
    effort: { high: yes, low: yes, max: yes, medium: yes, supported: true, xhigh: null },
    image_input: { supported: imageInput },
    pdf_input: yes,
    server_tools: { code_execution: yes, supported: true, web_search: yes },
    structured_outputs: yes,
    thinking: {
      supported: true,
      types: { adaptive: yes, between_tools: { supported: false }, disabled: yes, enabled: yes },
    },
  };
}

/** The stub's models as the API answers them; `created_at` falls a day apart, newest first. */
export function modelInfosOf(models: readonly AnthropicStubModel[]): ModelInfo[] {
  const newest = Date.parse("2026-01-01T00:00:00Z");
  return models.map((m, i) => ({
    type: "model",
    id: m.id,
    display_name: m.displayName ?? m.id,
    created_at: new Date(newest - i * 86_400_000).toISOString().replace(".000Z", "Z"),
    capabilities: m.noCapabilities ? null : capabilitiesOf(m.imageInput ?? true),
    lifecycle: m.lifecycle ?? "active",
    deprecated_at: m.lifecycle && m.lifecycle !== "active" ? "2025-12-01T00:00:00Z" : null,
    retires_at: null,
    line: null,
    max_input_tokens: 200_000,
    max_tokens: 64_000,
  }));
}

export type ModelsAnswer =
  | { status: 200; body: { data: ModelInfo[]; has_more: boolean; first_id: string | null; last_id: string | null } }
  | { status: 400; message: string };

/**
 * One page of the list for the query the request carried. Retired models only when `lifecycle`
 * asks for them; `pageCap` (default 1000): the most a page holds, whatever the limit, as a server
 * may answer fewer than asked.
 */
export function modelsPage(all: readonly ModelInfo[], query: Record<string, string>, pageCap = 1000): ModelsAnswer {
  const asked = query.limit === undefined ? 20 : Number(query.limit);
  if (!Number.isInteger(asked) || asked < 1 || asked > 1000)
    return { status: 400, message: "limit: Input should be an integer from 1 to 1000" };
  const limit = Math.min(asked, pageCap);
  if (query.after_id !== undefined && query.before_id !== undefined)
    return { status: 400, message: "after_id and before_id cannot both be set" };
  const stages = (query.lifecycle ?? "active,deprecated").split(",");
  const shown = all.filter((m) => stages.includes(m.lifecycle));
  const at = (id: string) => shown.findIndex((m) => m.id === id);
  let start = 0;
  let end = shown.length;
  if (query.after_id !== undefined) start = at(query.after_id) + 1 || shown.length;
  if (query.before_id !== undefined) end = Math.max(0, at(query.before_id));
  const data =
    query.before_id !== undefined ? shown.slice(Math.max(start, end - limit), end) : shown.slice(start, start + limit);
  const more = query.before_id !== undefined ? end - data.length > start : start + data.length < end;
  return {
    status: 200,
    body: { data, has_more: more, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null },
  };
}
