/**
 * What a plain gRPC client (grpcurl, buf curl, @grpc/grpc-js) finds on a service's port: server
 * reflection v1 and v1alpha listing every service and handing out usable file descriptors, an
 * UNIMPLEMENTED status (not an HTTP 404) for an unknown method, and grpc.health.v1 with NOT_FOUND for
 * an unknown service and a Watch that streams. Over a real h2c port with @grpc/grpc-js.
 */

import { connect } from "node:http2";
import {
  create,
  createFileRegistry,
  type DescMessage,
  fromBinary,
  type MessageInitShape,
  type MessageShape,
  toBinary,
} from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema, FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import * as grpc from "@grpc/grpc-js";
import { CatalogService } from "@kiln/proto/catalog";
import { HealthCheckRequestSchema, HealthCheckResponseSchema } from "@kiln/proto/health";
import * as v1 from "@kiln/proto/reflection/v1";
import * as v1alpha from "@kiln/proto/reflection/v1alpha";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { executionTestService } from "../../test/test-services.js";
import { buildRpcServer, type RpcServer } from "./rpc-server.js";

let server: RpcServer;
let target: string;
let client: grpc.Client;

beforeAll(async () => {
  server = await buildRpcServer(
    executionTestService("execution", {
      async listModels() {
        return { models: [] };
      },
    }),
  );
  const address = await server.app.listen({ host: "127.0.0.1", port: 0 });
  target = address.replace(/^http:\/\//, "");
  client = new grpc.Client(target, grpc.credentials.createInsecure());
});

afterAll(async () => {
  client?.close();
  await server?.app.close();
});

const codec = <M extends DescMessage>(schema: M) => ({
  serialize: (msg: MessageInitShape<M>) => Buffer.from(toBinary(schema, create(schema, msg))),
  deserialize: (buf: Buffer) => fromBinary(schema, buf),
});

/** One request on a reflection bidi stream, its one answer. */
async function reflect(
  version: typeof v1 | typeof v1alpha,
  request: MessageInitShape<typeof v1.ServerReflectionRequestSchema>,
): Promise<MessageShape<typeof v1.ServerReflectionResponseSchema>> {
  const req = codec(version.ServerReflectionRequestSchema as typeof v1.ServerReflectionRequestSchema);
  const res = codec(version.ServerReflectionResponseSchema as typeof v1.ServerReflectionResponseSchema);
  const call = client.makeBidiStreamRequest(
    `/${version.ServerReflection.typeName}/ServerReflectionInfo`,
    req.serialize,
    res.deserialize,
  );
  return new Promise((resolve, reject) => {
    call.on("data", (answer) => {
      resolve(answer);
      call.end();
    });
    call.on("error", reject);
    call.write(request);
  });
}

describe("gRPC server reflection", () => {
  for (const [name, version] of [
    ["v1", v1],
    ["v1alpha", v1alpha],
  ] as const) {
    it(`lists every service (${name})`, async () => {
      const answer = await reflect(version, { messageRequest: { case: "listServices", value: "*" } });
      expect(answer.messageResponse.case).toBe("listServicesResponse");
      const names =
        answer.messageResponse.case === "listServicesResponse"
          ? answer.messageResponse.value.service.map((s) => s.name)
          : [];
      expect(names).toEqual(
        expect.arrayContaining([
          "kiln.execution.v1.ExecutionService",
          "grpc.health.v1.Health",
          "grpc.reflection.v1.ServerReflection",
          "grpc.reflection.v1alpha.ServerReflection",
        ]),
      );
    });

    it(`hands out a file descriptor set a client can build the service from (${name})`, async () => {
      const answer = await reflect(version, {
        messageRequest: { case: "fileContainingSymbol", value: "kiln.execution.v1.ExecutionService.RunPrompt" },
      });
      expect(answer.messageResponse.case).toBe("fileDescriptorResponse");
      const protos =
        answer.messageResponse.case === "fileDescriptorResponse"
          ? answer.messageResponse.value.fileDescriptorProto.map((b) => fromBinary(FileDescriptorProtoSchema, b))
          : [];
      expect(protos[0]?.name).toBe("kiln/execution/v1/execution.proto");
      // As grpcurl does: every import is there, so the set resolves on its own.
      // The requested file comes first, then its imports as they were met; a registry takes a
      // file after its imports, so the set is put in that order (imports shared by two files too).
      const byName = new Map(protos.map((p) => [p.name, p]));
      const ordered: typeof protos = [];
      const place = (name: string) => {
        const file = byName.get(name);
        if (!file || ordered.includes(file)) return;
        for (const dependency of file.dependency) place(dependency);
        ordered.push(file);
      };
      for (const file of protos) place(file.name);
      const registry = createFileRegistry(create(FileDescriptorSetSchema, { file: ordered }));
      const service = registry.getService("kiln.execution.v1.ExecutionService");
      expect(service?.methods.map((m) => m.name)).toContain("RunPrompt");
    });

    it(`says NOT_FOUND for an unknown symbol (${name})`, async () => {
      const answer = await reflect(version, {
        messageRequest: { case: "fileContainingSymbol", value: "no.such.Thing" },
      });
      expect(answer.messageResponse).toMatchObject({ case: "errorResponse", value: { errorCode: 5 } });
    });
  }
});

describe("unknown methods and health", () => {
  const unary = <I extends DescMessage, O extends DescMessage>(
    path: string,
    input: I,
    output: O,
    msg: MessageInitShape<I>,
  ) =>
    new Promise<MessageShape<O>>((resolve, reject) =>
      client.makeUnaryRequest(path, codec(input).serialize, codec(output).deserialize, msg, (e, r) =>
        e ? reject(e) : resolve(r as MessageShape<O>),
      ),
    );

  it("answers UNIMPLEMENTED (12) for a method no service has", async () => {
    const error = await unary(
      "/kiln.execution.v1.ExecutionService/Nope",
      HealthCheckRequestSchema,
      HealthCheckResponseSchema,
      {},
    ).catch((e: grpc.ServiceError) => e);
    expect(error).toMatchObject({ code: grpc.status.UNIMPLEMENTED });
  });

  it("answers Connect callers of an unknown service with Connect's unimplemented", async () => {
    const catalog = createClient(
      CatalogService,
      createConnectTransport({ baseUrl: `http://${target}`, httpVersion: "2" }),
    );
    const error = await catalog.listPrompts({ organizationId: "org_x" }).catch((e: unknown) => e);
    expect(ConnectError.from(error).code).toBe(Code.Unimplemented);
    // On the wire: Connect's error body, not the web framework's own 404.
    const session = connect(`http://${target}`);
    try {
      const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const stream = session.request({
          ":method": "POST",
          ":path": "/kiln.catalog.v1.CatalogService/ListPrompts",
          "content-type": "application/json",
        });
        let status = 0;
        let body = "";
        stream.on("response", (headers) => {
          status = Number(headers[":status"]);
        });
        stream.setEncoding("utf8");
        stream.on("data", (chunk: string) => {
          body += chunk;
        });
        stream.on("end", () => resolve({ status, body }));
        stream.on("error", reject);
        stream.end("{}");
      });
      expect(answer.status).toBe(404);
      expect(JSON.parse(answer.body)).toEqual({
        code: "unimplemented",
        message: "unknown method /kiln.catalog.v1.CatalogService/ListPrompts",
      });
    } finally {
      session.close();
    }
  });

  it("checks liveness and readiness, and answers NOT_FOUND for an unknown service", async () => {
    const path = "/grpc.health.v1.Health/Check";
    expect(await unary(path, HealthCheckRequestSchema, HealthCheckResponseSchema, { service: "" })).toMatchObject({
      status: 1,
    });
    expect(
      await unary(path, HealthCheckRequestSchema, HealthCheckResponseSchema, { service: "readiness" }),
    ).toMatchObject({
      status: 1,
    });
    const error = await unary(path, HealthCheckRequestSchema, HealthCheckResponseSchema, { service: "nope" }).catch(
      (e: grpc.ServiceError) => e,
    );
    expect(error).toMatchObject({ code: grpc.status.NOT_FOUND });
  });

  it("streams the status with Watch", async () => {
    const { serialize } = codec(HealthCheckRequestSchema);
    const { deserialize } = codec(HealthCheckResponseSchema);
    const call = client.makeServerStreamRequest("/grpc.health.v1.Health/Watch", serialize, deserialize, {
      service: "readiness",
    });
    const first = await new Promise((resolve, reject) => {
      call.on("data", resolve);
      call.on("error", reject);
    });
    call.cancel();
    expect(first).toMatchObject({ status: 1 });
  });
});
