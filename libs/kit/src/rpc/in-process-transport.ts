/** The embedded mode's transports: a service called in the same process, through its routes or directly. */
import {
  clone,
  create,
  type DescMessage,
  type DescMethodUnary,
  type DescService,
  type MessageInitShape,
  type MessageShape,
} from "@bufbuild/protobuf";
import type {
  ConnectRouter,
  ContextValues,
  HandlerContext,
  Interceptor,
  Transport,
  UnaryRequest,
  UnaryResponse,
} from "@connectrpc/connect";
import {
  Code,
  ConnectError,
  createContextValues,
  createHandlerContext,
  createRouterTransport,
  createServiceImplSpec,
} from "@connectrpc/connect";
import { raceAbort } from "../abort.js";
import type { ServiceModule } from "./rpc-server.js";

/**
 * The embedded mode's transport: the same routes and interceptors as the network server, the real
 * serialization, no socket.
 */
export function createInProcessTransport(service: ServiceModule, clientInterceptors: Interceptor[]): Transport {
  return createRouterTransport(service.routes, {
    router: { interceptors: service.interceptors },
    transport: { interceptors: clientInterceptors },
  });
}

type UnaryImpl = (request: unknown, context: HandlerContext) => unknown;

/** The unary implementations a service's routes register, by method path, as a router would see them. */
function unaryImplementations(service: ServiceModule): Map<string, UnaryImpl> {
  const impls = new Map<string, UnaryImpl>();
  const recorder = {
    handlers: [],
    service(desc: DescService, impl: Record<string, unknown>) {
      const spec = createServiceImplSpec(desc, impl as never);
      for (const m of Object.values(spec.methods)) {
        if (m.kind === "unary") impls.set(`/${desc.typeName}/${m.method.name}`, m.impl as UnaryImpl);
      }
      return recorder;
    },
    rpc() {
      return recorder;
    },
  };
  service.routes(recorder as unknown as ConnectRouter);
  return impls;
}

/** Client interceptors first (outermost), then the next function, as Connect applies them. */
function chain<T>(next: T, interceptors: Interceptor[]): T {
  return interceptors.reduceRight((n, interceptor) => interceptor(n as never) as T, next);
}

/**
 * The embedded mode's transport for unary calls: the client interceptors, then the service's own
 * server interceptors (errors, authentication, idempotency) and its implementation, in the same
 * order and with the same headers, context values and deadline as over the wire, but without
 * encoding messages, emulating HTTP or streaming envelopes. Messages are cloned at the boundary,
 * as serialization would copy them, so neither side shares objects with the other. Streaming
 * calls go through createInProcessTransport.
 */
export function createDirectTransport(service: ServiceModule, clientInterceptors: Interceptor[]): Transport {
  const impls = unaryImplementations(service);
  const routed = createInProcessTransport(service, clientInterceptors);
  return {
    async unary<I extends DescMessage, O extends DescMessage>(
      method: DescMethodUnary<I, O>,
      signal: AbortSignal | undefined,
      timeoutMs: number | undefined,
      header: ConstructorParameters<typeof Headers>[0] | undefined,
      input: MessageInitShape<I>,
      contextValues?: ContextValues,
    ): Promise<UnaryResponse<I, O>> {
      const path = `/${method.parent.typeName}/${method.name}`;
      const impl = impls.get(path);
      if (!impl) return routed.unary(method, signal, timeoutMs, header, input, contextValues);
      const url = `in-process:${path}`;
      // What the server side sees: a fresh request from the headers alone, as after the wire.
      const serve = async (req: UnaryRequest<I, O>): Promise<UnaryResponse<I, O>> => {
        const context = createHandlerContext({
          service: method.parent,
          method,
          protocolName: "in-process",
          requestMethod: "POST",
          url,
          timeoutMs,
          requestSignal: req.signal,
          requestHeader: req.header,
          contextValues: service.contextValues?.(path),
        });
        const handle = async (sreq: UnaryRequest<I, O>): Promise<UnaryResponse<I, O>> => {
          const output = await impl(sreq.message, context);
          return {
            stream: false,
            service: method.parent,
            method,
            header: context.responseHeader,
            trailer: context.responseTrailer,
            message: clone(method.output, create(method.output, output as MessageInitShape<O>)),
          };
        };
        const served = chain(
          handle,
          service.interceptors,
        )({
          stream: false,
          service: method.parent,
          method,
          requestMethod: "POST",
          url,
          signal: context.signal,
          header: context.requestHeader,
          contextValues: context.values,
          message: decodedAsAfterTheWire(method.input, req.message),
        });
        try {
          // A deadline or a cancelled caller ends the call even if the handler does not listen.
          return await raceAbort(served, context.signal);
        } finally {
          // Ends what the handler left listening, as a server does when a call ends; one reason
          // for all calls rather than a DOMException made for each.
          context.abort(CALL_ENDED);
        }
      };
      try {
        return await chain(
          serve,
          clientInterceptors,
        )({
          stream: false,
          service: method.parent,
          method,
          requestMethod: "POST",
          url,
          signal: signal ?? new AbortController().signal,
          header: new Headers(header),
          contextValues: contextValues ?? createContextValues(),
          message: create(method.input, input),
        });
      } catch (e) {
        throw ConnectError.from(e);
      }
    },
    stream: (...args) => routed.stream(...args),
  };
}

const CALL_ENDED = new ConnectError("the call has ended", Code.Canceled);

/**
 * The request as a server holds it after decoding: a copy, refused as invalid_argument where the
 * wire's decoding refuses it (a string that is not valid Unicode, which protobuf cannot carry).
 */
function decodedAsAfterTheWire<I extends DescMessage>(schema: I, message: MessageShape<I>): MessageShape<I> {
  try {
    return clone(schema, message);
  } catch (e) {
    throw new ConnectError(
      `cannot decode message ${schema.typeName}: ${e instanceof Error ? e.message : String(e)}`,
      Code.InvalidArgument,
    );
  }
}
