/**
 * Prompt templates as the services render them: the renderer of @kiln/contracts (the one the SDK
 * renders with too, contracts/prompt-template.ts) with a cache of recent parses bounded by their
 * total length, so that long prompts cannot grow it past `maxChars` (Mustache's default cache
 * keeps every template forever).
 */
import {
  createTemplateRenderer,
  type PartialLookup,
  renderPrompt,
  type TemplateRenderer,
} from "@kiln/contracts/prompt-template";
import type { TemplateToken } from "@kiln/contracts/template-parse";
import { LRUCache } from "lru-cache";

/** A renderer whose parses are kept, the most recent first, up to `maxChars` of template text. */
export function templateRenderer({ maxChars = 4_000_000 }: { maxChars?: number } = {}): TemplateRenderer {
  const parsed = new LRUCache<string, TemplateToken[]>({
    maxSize: maxChars,
    sizeCalculation: (_tokens, template) => Math.max(1, template.length),
  });
  return createTemplateRenderer({
    get: (template) => parsed.get(template),
    set: (template, tokens) => {
      if (template.length <= maxChars) parsed.set(template, tokens);
    },
  });
}

/** The parse of recent prompt templates, bounded. */
const promptTemplates = templateRenderer();

/**
 * A prompt template filled with its variables (renderPrompt: Mustache without HTML escaping,
 * non-string values as JSON, `{{> name}}` from `partials`). Runs, review items and the MCP
 * server's prompts render with it.
 */
export function renderPromptTemplate(
  template: string,
  variables: Record<string, unknown>,
  partials?: PartialLookup,
): string {
  return renderPrompt(promptTemplates, template, variables, partials);
}
