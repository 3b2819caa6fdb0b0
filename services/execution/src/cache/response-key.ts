/**
 * The response cache's key (docs/cache.md "The key"): everything that changes a prompt run's answer,
 * as canonical JSON (keys sorted, so the same request hashes the same however it was built),
 * hashed with SHA-256. The organization is part of it: no two organizations share an entry.
 */
import { createHash } from "node:crypto";
import type { ChatMessage, ResponseFormat, ToolChoice } from "@kiln/models/provider";
import { stringify } from "safe-stable-stringify";

export interface ResponseKeyInput {
  organizationId: string;
  promptVersionId: string;
  /** The resolved model ("<provider>/<model>" or "route/<name>") and the connection serving it. */
  model: string;
  connectionId?: string;
  /** The rendered messages the model is sent first. */
  messages: ChatMessage[];
  /** The version's tools (with their versions) and the caller's, as the model is offered them. */
  tools: unknown[];
  toolChoice?: ToolChoice;
  responseFormat: ResponseFormat;
  /** The version's sampling settings with the caller's over them. */
  parameters: Record<string, unknown>;
}

/** The hex SHA-256 of the input's canonical JSON. */
export function responseKeyOf(input: ResponseKeyInput): string {
  // Version 1 of the key's shape: a later shape never reads an earlier one's entries.
  const canonical = stringify({ v: 1, ...input }) ?? "";
  return createHash("sha256").update(canonical).digest("hex");
}
