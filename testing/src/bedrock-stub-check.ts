/**
 * What the Bedrock stub refuses, as Bedrock does: a request whose SigV4 signature does not verify
 * (recomputed over the headers and the query it signed with `@smithy/signature-v4`, the AWS SDK's
 * own signer), and
 * a Converse body Bedrock answers ValidationException to (unknown fields, no messages, a
 * conversation that does not start with the user or alternate, empty or mixed content blocks,
 * tool blocks without a toolConfig, tool results that do not answer the calls before them).
 */
import { Sha256 } from "@aws-crypto/sha256-js";
import { SignatureV4 } from "@smithy/signature-v4";
import type { StubRequest } from "./stub-http.js";

export interface StubCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
}

const AUTH =
  /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/;

/** The refusal of the signature ([status, error type, message]), or undefined when it verifies. */
export async function signatureRefusal(request: StubRequest, credentials: StubCredentials, origin: string) {
  const auth = AUTH.exec(request.headers.authorization ?? "");
  if (!auth) return [403, "MissingAuthenticationTokenException", "Missing Authentication Token"] as const;
  const [, keyId, , region, service, signedHeaders = "", signature] = auth;
  if (keyId !== credentials.accessKeyId) {
    return [403, "UnrecognizedClientException", "The security token included in the request is invalid."] as const;
  }
  if (region !== credentials.region || service !== "bedrock") {
    return [
      403,
      "InvalidSignatureException",
      `Credential should be scoped to a valid region and service 'bedrock'.`,
    ] as const;
  }
  const headers: Record<string, string> = {};
  // Over HTTP/2 the AWS SDK signs `:authority`, the host.
  for (const name of signedHeaders.split(";"))
    headers[name] = request.headers[name === ":authority" ? "host" : name] ?? "";
  const url = new URL(origin);
  const signer = new SignatureV4({
    credentials: {
      accessKeyId: credentials.accessKeyId,
      secretAccessKey: credentials.secretAccessKey,
      sessionToken: request.headers["x-amz-security-token"],
    },
    region,
    service: "bedrock",
    sha256: Sha256,
    // Sign exactly the headers the client signed: no x-amz-content-sha256 of the verifier's own.
    applyChecksum: false,
  });
  const date = request.headers["x-amz-date"] ?? "";
  const signingDate = new Date(
    `${date.slice(0, 4)}-${date.slice(4, 6)}-${date.slice(6, 8)}T${date.slice(9, 11)}:${date.slice(11, 13)}:${date.slice(13, 15)}Z`,
  );
  const signed = await signer.sign(
    {
      method: request.method,
      protocol: url.protocol,
      hostname: url.hostname,
      port: Number(url.port),
      path: request.rawPath,
      query: request.query,
      headers,
      body: request.raw.toString("utf8"),
    },
    { signingDate },
  );
  const expected = /Signature=([0-9a-f]{64})/.exec(String(signed.headers.authorization))?.[1];
  if (expected !== signature) {
    return [
      403,
      "InvalidSignatureException",
      "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.",
    ] as const;
  }
  return undefined;
}

const TOP = new Set([
  "messages",
  "system",
  "inferenceConfig",
  "toolConfig",
  "guardrailConfig",
  "additionalModelRequestFields",
  "additionalModelResponseFieldPaths",
  "promptVariables",
  "requestMetadata",
  "performanceConfig",
  "outputConfig",
  "serviceTier",
]);
const BLOCKS = [
  "text",
  "image",
  "document",
  "video",
  "toolUse",
  "toolResult",
  "guardContent",
  "cachePoint",
  "reasoningContent",
  "citationsContent",
];

// biome-ignore lint/suspicious/noExplicitAny: the stub reads whatever JSON arrived.
type Json = any;

/** Why Bedrock would answer ValidationException to this Converse body, or undefined. */
export function validationProblem(body: Json): string | undefined {
  if (body === null || typeof body !== "object" || Array.isArray(body))
    return "Malformed input request, please reformat your input and try again.";
  for (const key of Object.keys(body)) {
    if (!TOP.has(key))
      return `Malformed input request: extraneous key [${key}] is not permitted, please reformat your input and try again.`;
  }
  const messages: Json[] = body.messages;
  if (!Array.isArray(messages) || messages.length === 0)
    return "A conversation must start with a user message. Try again with a conversation that starts with a user message.";
  if (messages[0].role !== "user")
    return "A conversation must start with a user message. Try again with a conversation that starts with a user message.";
  let usesTools = false;
  for (const [i, message] of messages.entries()) {
    if (message.role !== "user" && message.role !== "assistant") return `messages.${i}.role: must be user or assistant`;
    if (i > 0 && messages[i - 1].role === message.role) {
      return "A conversation must alternate between user and assistant roles. Make sure the conversation alternates between user and assistant roles and try again.";
    }
    if (!Array.isArray(message.content) || message.content.length === 0)
      return `The content field in the Message object at messages.${i} is empty. Add a ContentBlock object to the content field and try again.`;
    for (const block of message.content as Json[]) {
      const kinds = Object.keys(block ?? {});
      if (kinds.length !== 1 || !BLOCKS.includes(kinds[0] as string))
        return `messages.${i}.content: a content block must have exactly one member`;
      if (block.toolUse || block.toolResult) usesTools = true;
      if (block.image && !/^[A-Za-z0-9+/]+=*$/.test(block.image.source?.bytes ?? ""))
        return `messages.${i}.content.image.source.bytes: must be base64`;
    }
    const results = (message.content as Json[]).filter((b) => b.toolResult).map((b) => b.toolResult.toolUseId);
    const previous =
      i > 0 ? (messages[i - 1].content as Json[]).filter((b) => b.toolUse).map((b) => b.toolUse.toolUseId) : [];
    if (previous.length > 0 && message.role === "user" && [...previous].sort().join() !== [...results].sort().join()) {
      return `Expected toolResult blocks at messages.${i}.content for the following Ids: ${previous.join(", ")}`;
    }
  }
  if (usesTools && !body.toolConfig)
    return "The toolConfig field must be defined when using toolUse and toolResult content blocks.";
  for (const [key] of Object.entries(body.inferenceConfig ?? {})) {
    if (!["maxTokens", "temperature", "topP", "stopSequences"].includes(key))
      return `Malformed input request: extraneous key [${key}] is not permitted`;
  }
  return undefined;
}
