/**
 * gRPC server reflection (grpc.reflection.v1 and v1alpha) for the services a router serves, so that
 * grpcurl, buf curl and Postman list and call their methods without the .proto files. Answers from
 * the descriptors protobuf-es generated: a file and every file it imports, transitively.
 */
import { type DescFile, type DescService, toBinary } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import type { ConnectRouter } from "@connectrpc/connect";
import { ServerReflection as ReflectionV1 } from "@kiln/proto/reflection/v1";
import { ServerReflection as ReflectionV1alpha } from "@kiln/proto/reflection/v1alpha";

/** The two reflection services' paths: public, like the health check (they reveal only the schema). */
export const REFLECTION_PATHS = [ReflectionV1, ReflectionV1alpha].map(
  (s) => `/${s.typeName}/${s.methods[0]?.name ?? "ServerReflectionInfo"}`,
);

/** gRPC status NOT_FOUND, as reflection's ErrorResponse carries it. */
const NOT_FOUND = 5;

type Request = {
  host: string;
  messageRequest:
    | { case: "fileByFilename" | "fileContainingSymbol" | "allExtensionNumbersOfType" | "listServices"; value: string }
    | { case: "fileContainingExtension"; value: { containingType: string; extensionNumber: number } }
    | { case: undefined; value?: undefined };
};

export function registerReflection(router: ConnectRouter, services: DescService[]): void {
  const all = [...services, ReflectionV1, ReflectionV1alpha];
  const files = new Map<string, DescFile>();
  const addFile = (file: DescFile) => {
    if (files.has(file.proto.name)) return;
    files.set(file.proto.name, file);
    for (const dependency of file.dependencies) addFile(dependency);
  };
  for (const service of all) addFile(service.file);

  /** Every name a file declares: messages (nested too), enums, services and their methods. */
  const symbols = new Map<string, DescFile>();
  for (const file of files.values()) {
    const add = (name: string) => symbols.set(name, file);
    const walkMessages = (
      messages: { typeName: string; nestedMessages: unknown[]; nestedEnums: { typeName: string }[] }[],
    ) => {
      for (const message of messages) {
        add(message.typeName);
        for (const e of message.nestedEnums) add(e.typeName);
        walkMessages(message.nestedMessages as typeof messages);
      }
    };
    walkMessages(file.messages);
    for (const e of file.enums) add(e.typeName);
    for (const service of file.services) {
      add(service.typeName);
      for (const method of service.methods) add(`${service.typeName}.${method.name}`);
    }
  }

  const withImports = (file: DescFile): Uint8Array[] => {
    const out = new Map<string, Uint8Array>();
    const visit = (f: DescFile) => {
      if (out.has(f.proto.name)) return;
      out.set(f.proto.name, toBinary(FileDescriptorProtoSchema, f.proto));
      for (const dependency of f.dependencies) visit(dependency);
    };
    visit(file);
    return [...out.values()];
  };

  const found = (file: DescFile) => ({
    case: "fileDescriptorResponse",
    value: { fileDescriptorProto: withImports(file) },
  });
  const notFound = (what: string) => ({
    case: "errorResponse",
    value: { errorCode: NOT_FOUND, errorMessage: `${what} not found` },
  });
  const messageResponseOf = (request: Request["messageRequest"]): { case: string; value: unknown } => {
    switch (request.case) {
      case "listServices":
        return { case: "listServicesResponse", value: { service: all.map((s) => ({ name: s.typeName })) } };
      case "fileByFilename": {
        const file = files.get(request.value);
        return file ? found(file) : notFound(`file ${request.value}`);
      }
      case "fileContainingSymbol": {
        const file = symbols.get(request.value.replace(/^\./, ""));
        return file ? found(file) : notFound(`symbol ${request.value}`);
      }
      case "allExtensionNumbersOfType":
        // No service declares extensions: a known message has none, anything else is unknown.
        return symbols.has(request.value)
          ? { case: "allExtensionNumbersResponse", value: { baseTypeName: request.value, extensionNumber: [] } }
          : notFound(`type ${request.value}`);
      case "fileContainingExtension":
        return notFound(`extension ${request.value.extensionNumber} of ${request.value.containingType}`);
      default:
        return notFound("request");
    }
  };
  const respond = (req: Request) => ({
    validHost: req.host,
    originalRequest: req,
    messageResponse: messageResponseOf(req.messageRequest),
  });

  async function* info(requests: AsyncIterable<Request>) {
    for await (const req of requests) yield respond(req);
  }
  // The two versions share every message shape; only their package names differ.
  router.service(ReflectionV1, { serverReflectionInfo: info as never });
  router.service(ReflectionV1alpha, { serverReflectionInfo: info as never });
}
