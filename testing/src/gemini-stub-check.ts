/**
 * What the Gemini stub refuses with 400 INVALID_ARGUMENT, as the API does: unknown fields (proto
 * JSON takes camelCase and snake_case names), empty contents or parts, a part with no data or two,
 * roles other than user/model, function names Gemini refuses, a function-response turn that does
 * not answer every call of the turn before, calling modes it does not know, `allowedFunctionNames`
 * outside mode ANY, and both schema fields (or a JSON schema without the JSON MIME type).
 */

const TOP = new Set([
  "contents",
  "systemInstruction",
  "tools",
  "toolConfig",
  "generationConfig",
  "safetySettings",
  "cachedContent",
  "labels",
]);
const GENERATION = new Set([
  "stopSequences",
  "responseMimeType",
  "responseSchema",
  "responseJsonSchema",
  "responseModalities",
  "candidateCount",
  "maxOutputTokens",
  "temperature",
  "topP",
  "topK",
  "seed",
  "presencePenalty",
  "frequencyPenalty",
  "responseLogprobs",
  "logprobs",
  "enableEnhancedCivicAnswers",
  "speechConfig",
  "thinkingConfig",
  "imageConfig",
  "mediaResolution",
]);
const PART_DATA = [
  "text",
  "inlineData",
  "fileData",
  "functionCall",
  "functionResponse",
  "executableCode",
  "codeExecutionResult",
];
const PART_EXTRA = new Set(["thought", "thoughtSignature", "videoMetadata", "partMetadata"]);
const FUNCTION_NAME = /^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$/;
const MODES = new Set(["MODE_UNSPECIFIED", "AUTO", "ANY", "NONE", "VALIDATED"]);

const camel = (key: string) => key.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
// biome-ignore lint/suspicious/noExplicitAny: the stub reads whatever JSON arrived.
type Json = any;

function unknownField(object: Json, known: Set<string>, at: string): string | undefined {
  for (const key of Object.keys(object ?? {})) {
    if (!known.has(camel(key))) return `Invalid JSON payload received. Unknown name "${key}"${at}: Cannot find field.`;
  }
  return undefined;
}

/** Why Gemini would refuse this generateContent body, or undefined. */
export function refusalOf(body: Json): string | undefined {
  if (body === null || typeof body !== "object" || Array.isArray(body)) return "Invalid JSON payload received.";
  const top = unknownField(body, TOP, "");
  if (top) return top;
  const contents: Json[] = body.contents;
  if (!Array.isArray(contents) || contents.length === 0)
    return "* GenerateContentRequest.contents: contents is not specified";
  for (const [i, content] of contents.entries()) {
    const problem = contentProblem(content, `contents[${i}]`);
    if (problem) return problem;
  }
  for (let i = 0; i < contents.length; i++) {
    const calls = (contents[i].parts as Json[]).filter((p) => p.functionCall ?? p.function_call).length;
    if (contents[i].role !== "model" || calls === 0) continue;
    const next = contents[i + 1];
    if (!next) continue;
    const answers = (next.parts as Json[]).filter((p) => p.functionResponse ?? p.function_response).length;
    if (next.role !== "user" || answers !== calls) {
      return "Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.";
    }
  }
  if (body.systemInstruction) {
    const problem = contentProblem({ role: "user", ...body.systemInstruction }, "system_instruction");
    if (problem) return problem;
  }
  for (const tool of body.tools ?? []) {
    for (const fn of tool.functionDeclarations ?? tool.function_declarations ?? []) {
      if (typeof fn.name !== "string" || !FUNCTION_NAME.test(fn.name)) {
        return `* GenerateContentRequest.tools[0].function_declarations[0].name: Invalid function name. Must start with a letter or an underscore. Must be alphameric (a-z, A-Z, 0-9), underscores (_), dots (.), colons (:), or dashes (-), with a maximum length of 64.`;
      }
      if (fn.parameters && fn.parametersJsonSchema) return "parameters and parameters_json_schema cannot both be set";
    }
  }
  const calling = body.toolConfig?.functionCallingConfig;
  if (calling) {
    if (calling.mode !== undefined && !MODES.has(calling.mode)) {
      return `Invalid value at 'tool_config.function_calling_config.mode', "${calling.mode}"`;
    }
    if (calling.allowedFunctionNames && calling.mode !== "ANY" && calling.mode !== "VALIDATED") {
      return "* GenerateContentRequest.tool_config.function_calling_config.allowed_function_names: only allowed when mode is ANY.";
    }
  }
  const config = body.generationConfig;
  if (config) {
    const unknown = unknownField(config, GENERATION, " at 'generation_config'");
    if (unknown) return unknown;
    if (config.responseSchema && config.responseJsonSchema) {
      return "response_schema and response_json_schema cannot both be set";
    }
    if ((config.responseSchema || config.responseJsonSchema) && config.responseMimeType !== "application/json") {
      return "* GenerateContentRequest.generation_config.response_mime_type: response_mime_type must be application/json when a response schema is set.";
    }
  }
  return undefined;
}

function contentProblem(content: Json, at: string): string | undefined {
  if (content.role !== undefined && content.role !== "user" && content.role !== "model") {
    return `Please use a valid role: user, model.`;
  }
  if (!Array.isArray(content.parts) || content.parts.length === 0) {
    return `* GenerateContentRequest.${at}.parts: contents.parts must not be empty.`;
  }
  for (const part of content.parts as Json[]) {
    const data = Object.keys(part ?? {}).map(camel);
    const kinds = data.filter((k) => PART_DATA.includes(k));
    if (kinds.length !== 1 || data.some((k) => !PART_DATA.includes(k) && !PART_EXTRA.has(k))) {
      return `* GenerateContentRequest.${at}.parts: a part must have exactly one of ${PART_DATA.join(", ")}`;
    }
    const inline = part.inlineData ?? part.inline_data;
    if (inline && (typeof inline.mimeType !== "string" || typeof inline.data !== "string")) {
      return `* GenerateContentRequest.${at}.parts.inline_data: mime_type and data are required`;
    }
    const response = part.functionResponse ?? part.function_response;
    if (response && (typeof response.name !== "string" || typeof response.response !== "object")) {
      return `* GenerateContentRequest.${at}.parts.function_response: name and response (an object) are required`;
    }
  }
  return undefined;
}
