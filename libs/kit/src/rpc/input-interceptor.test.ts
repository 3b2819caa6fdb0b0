import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { CreatePromptVersionRequestSchema } from "@kiln/proto/catalog";
import { CreateEvaluationCasesRequestSchema } from "@kiln/proto/evaluation";
import { ExecutionService, RunPromptResponseSchema } from "@kiln/proto/execution";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { executionTestService, testTokens } from "../../test/test-services.js";
import { jsonTextOf } from "../json-text.js";
import { LIMITS } from "../limits.js";
import { createForwardInterceptor } from "./auth-interceptor.js";
import { remoteErrorOf } from "./connect-errors.js";
import { messageIssues } from "./input-interceptor.js";
import { buildRpcServer, type RpcServer } from "./rpc-server.js";
import { createDirectTransport } from "./transport.js";

const caller = [createForwardInterceptor(testTokens, { type: "service", id: "caller" })];

/** An internal caller of docs/api.md "Limits": its bad text reaches the service, which refuses it. */
describe("a service's own check of a request's text and sizes", () => {
  let server: RpcServer;
  let url: string;
  const handled: string[] = [];
  const service = executionTestService("limits", {
    async runPrompt(req) {
      handled.push(req.promptId);
      return create(RunPromptResponseSchema, {});
    },
  });

  beforeAll(async () => {
    server = await buildRpcServer(service);
    url = await server.app.listen({ host: "127.0.0.1", port: 0 });
  });
  afterAll(async () => {
    await server.app.close();
  });

  /** Connect's JSON format: the only one a lone surrogate survives (binary protobuf cannot encode it). */
  const client = (useBinaryFormat: boolean) =>
    createClient(
      ExecutionService,
      createConnectTransport({ baseUrl: url, httpVersion: "2", useBinaryFormat, interceptors: caller }),
    );
  const refusal = async (call: Promise<unknown>) => {
    const error = ConnectError.from(await call.then(() => new Error("answered")).catch((e) => e));
    expect(error.code).toBe(Code.InvalidArgument);
    return remoteErrorOf(error).details;
  };

  it("refuses a lone surrogate, naming the field, before the handler runs: in process and over the wire", async () => {
    // In process (the embedded mode): the message reaches the service as it is.
    const direct = createClient(ExecutionService, createDirectTransport(service, caller));
    const inProcess = ConnectError.from(
      await direct.runPrompt({ promptId: "p1", variables: jsonTextOf('{"a":"\ud800"}') }).catch((e) => e),
    );
    expect(inProcess.code).toBe(Code.InvalidArgument);
    expect(inProcess.rawMessage).toContain("invalid UTF8");
    // Over the wire, Connect's JSON can spell one; protobuf's decoding refuses it first.
    const wire = ConnectError.from(
      await client(false)
        .runPrompt({ promptId: "p1", variables: jsonTextOf('{"a":"\ud800"}') })
        .catch((e) => e),
    );
    expect(wire.code).toBe(Code.InvalidArgument);
    // protobuf-es names the innermost field it could not decode: the JsonText's own.
    expect(wire.rawMessage).toContain("kiln.common.v1.JsonText.json");
    expect(handled).not.toContain("p1");
  });

  it("refuses NUL in a string and a NUL escape in JSON text, and keeps an escaped backslash", async () => {
    expect(await refusal(client(true).runPrompt({ promptId: "p\u00002" }))).toEqual([
      { field: "promptId", issue: "must not contain NUL characters" },
    ]);
    expect(
      await refusal(
        client(true).runPrompt({ promptId: "p3", variables: jsonTextOf(JSON.stringify({ a: "x\u0000" })) }),
      ),
    ).toEqual([{ field: "variables", issue: "must not contain NUL characters" }]);
    await client(true).runPrompt({ promptId: "p4", variables: jsonTextOf(JSON.stringify({ a: "\\u0000 \u001b[1m" })) });
    expect(handled).toEqual(["p4"]);
  });

  it("serves variables at their limit and refuses them one byte past it", async () => {
    const variables = (bytes: number) => JSON.stringify({ doc: "é".repeat((bytes - 10) / 2) });
    expect(Buffer.byteLength(variables(LIMITS.variablesBytes))).toBe(LIMITS.variablesBytes);
    await client(true).runPrompt({ promptId: "p5", variables: jsonTextOf(variables(LIMITS.variablesBytes)) });
    expect(handled).toContain("p5");
    expect(
      await refusal(
        client(true).runPrompt({ promptId: "p6", variables: jsonTextOf(`${variables(LIMITS.variablesBytes)} `) }),
      ),
    ).toEqual([{ field: "variables", issue: "must be at most 256 KiB as JSON" }]);
  });
});

describe("messageIssues", () => {
  it("names a field of a repeated message as the REST body names it", () => {
    const request = create(CreateEvaluationCasesRequestSchema, {
      skillId: "s",
      cases: [
        { name: "ok", input: jsonTextOf("{}") },
        { name: "two\nlines", input: jsonTextOf("{}") },
        { name: "n".repeat(LIMITS.nameChars + 1), input: jsonTextOf('"\\u0000"') },
      ],
    });
    expect(messageIssues(request)).toEqual([
      { field: "cases[1].name", issue: "must be one line without control characters" },
      { field: "cases[2].input", issue: "must not contain NUL characters" },
      { field: "cases[2].name", issue: `must be at most ${LIMITS.nameChars} characters` },
    ]);
  });

  it("measures a JsonText by the name of the field that holds it", () => {
    const message = {
      variables: jsonTextOf(JSON.stringify({ doc: "é".repeat(LIMITS.variablesBytes / 2) })),
      inputSchema: jsonTextOf('{"description":"\\u0000"}'),
      workflow: jsonTextOf("{}"),
    };
    expect(messageIssues(message)).toEqual([
      { field: "variables", issue: "must be at most 256 KiB as JSON" },
      { field: "inputSchema", issue: "must not contain NUL characters" },
    ]);
  });

  it("names the fields of a content message as the REST body names them (no content. prefix)", () => {
    const request = create(CreatePromptVersionRequestSchema, {
      promptId: "p",
      content: {
        systemPrompt: "s".repeat(LIMITS.promptTextChars + 1),
        variablesSchema: jsonTextOf('{"description":"\\u0000"}'),
      },
    });
    expect(messageIssues(request)).toEqual([
      { field: "systemPrompt", issue: `must be at most ${LIMITS.promptTextChars} characters` },
      { field: "variablesSchema", issue: "must not contain NUL characters" },
    ]);
  });
});
