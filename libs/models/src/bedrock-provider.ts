/**
 * AWS Bedrock through the Converse API: `POST /model/{modelId}/converse`, or `/converse-stream`
 * (AWS event-stream frames, bedrock-stream.ts) for a streaming turn (`onDelta`), each attempt
 * signed afresh with SigV4 by `aws4fetch`'s signer (service "bedrock") and sent through node:http
 * (http-fetch.ts). The AWS SDK is not on the call path: its middleware stack, credential chain and
 * fetch handler are a great deal of code for one signed POST (docs/providers.md "Bedrock"). The
 * call policy is remote-call.ts's; Bedrock's ThrottlingException is its 429, retried.
 */
import { AwsV4Signer } from "aws4fetch";
import { type ConverseAnswer, toBedrockResult } from "./bedrock-result.js";
import { readConverseStream } from "./bedrock-stream.js";
import { toConverseBody } from "./bedrock-wire.js";
import { createHttpFetch } from "./http-fetch.js";
import type { ModelProvider, RemoteProviderOptions } from "./provider.js";
import { callRemote, type ErrorAnswer, policyOf } from "./remote-call.js";

export interface BedrockProviderOptions extends RemoteProviderOptions {
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** Temporary credentials (STS) come with one. */
  sessionToken?: string;
}

const EVENT_STREAM = "application/vnd.amazon.eventstream";

export function bedrockBaseUrl(region: string): string {
  return `https://bedrock-runtime.${region}.amazonaws.com`;
}

export function createBedrockProvider(options: BedrockProviderOptions): ModelProvider {
  const { id } = options;
  const send = options.fetch ?? createHttpFetch();
  const base = (options.baseUrl ?? bedrockBaseUrl(options.region)).replace(/\/+$/, "");
  const secrets = [options.secretAccessKey, ...(options.sessionToken ? [options.sessionToken] : [])];

  return {
    id,
    async generate(request) {
      const { onDelta } = request;
      const body = JSON.stringify(toConverseBody(request));
      const url = `${base}/model/${encodeURIComponent(request.model)}/${onDelta ? "converse-stream" : "converse"}`;
      return callRemote({
        ...policyOf(options),
        request,
        secrets,
        async send(signal) {
          const signed = await new AwsV4Signer({
            method: "POST",
            url,
            headers: {
              "content-type": "application/json",
              accept: onDelta ? EVENT_STREAM : "application/json",
              "user-agent": "kiln",
            },
            body,
            accessKeyId: options.accessKeyId,
            secretAccessKey: options.secretAccessKey,
            sessionToken: options.sessionToken,
            service: "bedrock",
            region: options.region,
          }).sign();
          // A model API that redirects is a wrong base URL.
          return send(url, { method: "POST", headers: signed.headers, body, signal, redirect: "error" });
        },
        streams: (response) =>
          onDelta !== undefined && (response.headers.get("content-type") ?? "").toLowerCase().startsWith(EVENT_STREAM),
        async read(answer, fail, retries) {
          const converse =
            answer.stream && onDelta
              ? await readConverseStream(answer.stream, onDelta)
              : (JSON.parse(answer.text ?? "") as ConverseAnswer);
          return toBedrockResult(converse, request, id, retries, fail);
        },
        messageOf: bedrockMessageOf,
      });
    },
  };
}

/** "ThrottlingException: Too many requests…": the error type (x-amzn-ErrorType) and the body's message. */
export function bedrockMessageOf(answer: ErrorAnswer): string {
  const type = (answer.headers.get("x-amzn-errortype") ?? "").split(":")[0];
  let message = answer.text;
  try {
    const body = JSON.parse(answer.text) as { message?: unknown; Message?: unknown };
    const said = body.message ?? body.Message;
    if (typeof said === "string") message = said;
  } catch {
    // Not JSON: the text itself.
  }
  return type ? `${type}: ${message}` : message;
}
