/**
 * A local stand-in for Bedrock Runtime's Converse API (`POST /model/{modelId}/converse` and
 * `/converse-stream`), for tests: node:http on 127.0.0.1 with a free port.
 *
 *   const stub = await startBedrockStub({ accessKeyId: "AKID", secretAccessKey: "secret", region: "us-east-1" });
 *   stub.script(bedrockReply.throttled(), bedrockReply.text("hi"));
 *   new BedrockRuntimeClient({ region: "us-east-1", endpoint: stub.baseUrl, credentials });
 *
 * As Bedrock does: every request must carry a SigV4 signature that verifies (403
 * UnrecognizedClientException for an unknown key, InvalidSignatureException for a wrong one);
 * a body Bedrock would refuse is 400 ValidationException (bedrock-stub-check.ts); errors carry
 * `x-amzn-ErrorType` and `{ message }`; `/converse-stream` answers binary event-stream frames
 * (bedrock-stub-replies.ts). Each request takes the next scripted response; once the script is
 * empty, the last user text is echoed. The control plane's ListFoundationModels
 * (`GET /foundation-models`, signed the same way) lists `models` (bedrock-stub-models.ts).
 */
import { randomUUID } from "node:crypto";
import type { ServerResponse } from "node:http";
import { type StubCredentials, signatureRefusal, validationProblem } from "./bedrock-stub-check.js";
import { type BedrockStubModel, DEFAULT_BEDROCK_MODELS, foundationModels } from "./bedrock-stub-models.js";
import {
  type BedrockStubResponse,
  type BedrockStubUsage,
  bedrockReply,
  converseAnswer,
  converseFrames,
} from "./bedrock-stub-replies.js";
import { createScript, listenStub, pause, type StubRequest, sendJson, wordsOf } from "./stub-http.js";

export type { BedrockStubResponse, BedrockStubToolUse, BedrockStubUsage } from "./bedrock-stub-replies.js";
export type { BedrockStubModel, StubRequest };
export { bedrockReply };

export interface BedrockStub {
  /** e.g. "http://127.0.0.1:41234": the SDK client's `endpoint`, the provider's `baseUrl`. */
  baseUrl: string;
  /** Every request received, in order (those refused included). */
  requests: StubRequest[];
  script(...responses: BedrockStubResponse[]): void;
  pending(): number;
  reset(): void;
  close(): Promise<void>;
}

const ROUTE = /^\/model\/([^/]+)\/(converse|converse-stream)$/;

/** `models`: what ListFoundationModels lists (default DEFAULT_BEDROCK_MODELS). */
export async function startBedrockStub(
  options: StubCredentials & { models?: BedrockStubModel[] },
): Promise<BedrockStub> {
  const { models = DEFAULT_BEDROCK_MODELS, ...credentials } = options;
  const requests: StubRequest[] = [];
  const { next, controls } = createScript<BedrockStubResponse>([requests]);
  let origin = "";

  const fail = (res: ServerResponse, status: number, errorType: string, message: string) =>
    sendJson(
      res,
      status,
      { message },
      {
        "x-amzn-errortype": `${errorType}:http://internal.amazon.com/coral/com.amazon.bedrock/`,
        "x-amzn-requestid": randomUUID(),
      },
    );

  const stub = await listenStub(async (request, res) => {
    requests.push(request);
    const route = ROUTE.exec(request.rawPath);
    const listing = request.method === "GET" && request.rawPath === "/foundation-models";
    if (!listing && (request.method !== "POST" || !route)) return fail(res, 404, "UnknownOperationException", "");
    const refused = await signatureRefusal(request, credentials, origin);
    if (refused) return fail(res, refused[0], refused[1], refused[2]);
    if (listing) {
      const listed = foundationModels(models, credentials.region, request.query);
      if ("invalid" in listed) return fail(res, 400, "ValidationException", listed.invalid);
      return sendJson(res, 200, listed, { "x-amzn-requestid": randomUUID() });
    }
    if (!route) return fail(res, 404, "UnknownOperationException", "");
    const problem = validationProblem(request.body);
    if (problem) return fail(res, 400, "ValidationException", problem);
    const response = next() ?? echo(request);
    if (response.type === "hang") return;
    await pause(response.delayMs ?? 0);
    if (res.destroyed) return;
    if (response.type === "error") return fail(res, response.status, response.errorType, response.message);
    const usage: BedrockStubUsage = response.usage ?? {
      inputTokens: wordsOf(JSON.stringify(request.body.messages)),
      outputTokens: wordsOf(response.pieces.join("")) + (response.toolUses?.length ?? 0),
    };
    const ids = (response.toolUses ?? []).map(
      (t) => t.toolUseId ?? `tooluse_${randomUUID().replaceAll("-", "").slice(0, 22)}`,
    );
    if (route[2] === "converse")
      return sendJson(res, 200, converseAnswer(response, usage, ids), { "x-amzn-requestid": randomUUID() });
    res.writeHead(200, { "content-type": "application/vnd.amazon.eventstream", "x-amzn-requestid": randomUUID() });
    res.flushHeaders();
    for (const frame of converseFrames(response, usage, ids)) {
      if (res.destroyed) return;
      await new Promise((written) => res.write(frame, written));
    }
    res.end();
  });
  origin = stub.origin;

  return {
    baseUrl: stub.origin,
    requests,
    ...controls,
    close: stub.close,
  };
}

function echo(request: StubRequest): BedrockStubResponse {
  // biome-ignore lint/suspicious/noExplicitAny: the request as sent.
  const users = (request.body.messages as any[]).filter((m) => m.role === "user");
  // biome-ignore lint/suspicious/noExplicitAny: the request as sent.
  const text = ((users.at(-1)?.content ?? []) as any[]).map((b) => b.text ?? "").join("");
  return bedrockReply.text(text);
}
