/**
 * A @grpc/grpc-js client for any Kiln service, built from the protobuf-es service descriptor:
 * no extra code generation (docs/architecture.md "RPC transport"). What an internal caller on plain gRPC would do.
 */
import {
  create,
  type DescMessage,
  type DescService,
  fromBinary,
  type MessageInitShape,
  type MessageShape,
  toBinary,
} from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";

export function grpcJsServiceDefinition(service: DescService): grpc.ServiceDefinition {
  const def: Record<string, grpc.MethodDefinition<unknown, unknown>> = {};
  for (const m of service.methods) {
    def[m.localName] = {
      path: `/${service.typeName}/${m.name}`,
      requestStream: m.methodKind === "client_streaming" || m.methodKind === "bidi_streaming",
      responseStream: m.methodKind === "server_streaming" || m.methodKind === "bidi_streaming",
      requestSerialize: (msg) => Buffer.from(toBinary(m.input, msg as never)),
      requestDeserialize: (buf) => fromBinary(m.input, buf),
      responseSerialize: (msg) => Buffer.from(toBinary(m.output, msg as never)),
      responseDeserialize: (buf) => fromBinary(m.output, buf),
      originalName: m.name,
    };
  }
  return def;
}

type UnaryFn = (req: unknown, md: grpc.Metadata, cb: (e: grpc.ServiceError | null, r: unknown) => void) => void;

/** Calls one unary method with metadata; rejects with the grpc ServiceError (code, details). */
export async function callUnary<I extends DescMessage, O extends DescMessage>(
  target: string,
  service: DescService,
  method: { localName: string; input: I; output: O },
  request: MessageInitShape<I>,
  metadata: Record<string, string>,
): Promise<MessageShape<O>> {
  const Ctor = grpc.makeGenericClientConstructor(grpcJsServiceDefinition(service), service.name);
  const client = new Ctor(target, grpc.credentials.createInsecure()) as unknown as grpc.Client &
    Record<string, UnaryFn>;
  const md = new grpc.Metadata();
  for (const [k, v] of Object.entries(metadata)) md.set(k, v);
  try {
    const fn = client[method.localName];
    if (!fn) throw new Error(`no method ${method.localName}`);
    return await new Promise<MessageShape<O>>((resolve, reject) =>
      fn.call(client, create(method.input, request), md, (e, r) => (e ? reject(e) : resolve(r as MessageShape<O>))),
    );
  } finally {
    client.close();
  }
}
