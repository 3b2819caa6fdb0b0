/**
 * The `json` of a turn that asked for a JSON answer (`responseFormat` json_schema or json_object),
 * the same for every provider: its text parsed, when the turn called no tool and said something.
 */
import type { ModelRequest, ModelResult } from "./provider.js";

/** `result` with `json` set when the request asked for JSON and the text parses; else as it was. */
export function withAnsweredJson(result: ModelResult, request: ModelRequest): ModelResult {
  const json = request.responseFormat?.type === "json_schema" || request.responseFormat?.type === "json_object";
  if (json && result.toolCalls.length === 0 && result.text.trim() !== "") {
    try {
      result.json = JSON.parse(result.text);
    } catch {
      // Left to the executor: a truncated or non-JSON answer has no `json`.
    }
  }
  return result;
}
