/**
 * Connect, gRPC and gRPC-Web routes on a Fastify server, as `@connectrpc/connect-fastify` plugs
 * them in, with one difference measured on the run path: a unary answer is written whole, its data
 * and the end of its stream in one HTTP/2 write. The library writes the message, waits for the
 * write's callback and ends the stream a turn later, so each answer left in two socket writes and
 * woke its caller twice (docs/benchmarks.md, issue #14, fifth pass). Streaming answers are written
 * by the library, message by message.
 */
import type { ConnectRouter, ContextValues, Interceptor } from "@connectrpc/connect";
import { Code, ConnectError, createConnectRouter } from "@connectrpc/connect";
import type { UniversalServerResponse } from "@connectrpc/connect/protocol";
import * as protoConnect from "@connectrpc/connect/protocol-connect";
import * as protoGrpc from "@connectrpc/connect/protocol-grpc";
import * as protoGrpcWeb from "@connectrpc/connect/protocol-grpc-web";
import {
  compressionBrotli,
  compressionGzip,
  universalRequestFromNodeRequest,
  universalResponseToNodeResponse,
} from "@connectrpc/connect-node";
import type { FastifyPluginCallback } from "fastify";
import type { Logger } from "../logger.js";

export interface ConnectRoutesOptions {
  routes: (router: ConnectRouter) => void;
  interceptors: Interceptor[];
  readMaxBytes: number;
  /** The context values a call starts with, from the Fastify request. */
  contextValues?: (request: { url: string }) => ContextValues;
  logger: Logger;
}

/**
 * A Fastify plugin: every method `routes` defines, at `/package.Service/Method`. A plugin so that
 * its content type parsers (application/json among them) stay inside its own scope.
 */
export const connectRoutes: FastifyPluginCallback<ConnectRoutesOptions> = (app, options, done) => {
  const router = createConnectRouter({
    interceptors: options.interceptors,
    readMaxBytes: options.readMaxBytes,
    acceptCompression: [compressionGzip, compressionBrotli],
  });
  options.routes(router);
  // Connect reads the bodies itself: Fastify passes them through unparsed.
  const passThrough = (_request: unknown, _payload: unknown, done: (err: null, body: undefined) => void) =>
    done(null, undefined);
  app.addContentTypeParser(
    [
      protoConnect.contentTypeUnaryJson,
      protoConnect.contentTypeStreamJson,
      protoGrpcWeb.contentTypeProto,
      protoGrpcWeb.contentTypeJson,
      protoGrpc.contentTypeProto,
      protoGrpc.contentTypeJson,
    ],
    passThrough,
  );
  for (const pattern of [protoGrpc.contentTypeRegExp, protoGrpcWeb.contentTypeRegExp, protoConnect.contentTypeRegExp])
    app.addContentTypeParser(pattern, passThrough);
  for (const handler of router.handlers) {
    const unary = handler.method.methodKind === "unary";
    app.all(handler.requestPath, async (request, reply) => {
      try {
        const answer = await handler(
          universalRequestFromNodeRequest(request.raw, reply.raw, undefined, options.contextValues?.(request)),
        );
        // Headers Fastify hooks set on the reply (the request id) go with the answer.
        for (const [name, value] of Object.entries(reply.getHeaders())) {
          if (value !== undefined) reply.raw.setHeader(name, value);
        }
        await (unary ? writeWhole(answer, reply.raw) : universalResponseToNodeResponse(answer, reply.raw));
      } catch (e) {
        // The caller went away: nothing is left to answer.
        if (ConnectError.from(e).code === Code.Aborted) return;
        options.logger.error({ err: e, method: handler.requestPath }, "an RPC answer could not be written");
      }
    });
  }
  done();
};

type NodeResponse = Parameters<typeof universalResponseToNodeResponse>[1];

/** A unary answer (one message, or none after an error), its trailers, and the stream's end: one write. */
async function writeWhole(answer: UniversalServerResponse, response: NodeResponse): Promise<void> {
  const chunks: Uint8Array[] = [];
  if (answer.body) for await (const chunk of answer.body) chunks.push(chunk);
  response.writeHead(answer.status, recordOf(answer.header));
  if (answer.trailer) response.addTrailers(recordOf(answer.trailer));
  // Ended, not awaited: an answer to a caller that went away has nowhere to go.
  if (chunks.length === 0) response.end();
  else response.end(chunks.length === 1 ? (chunks[0] as Uint8Array) : Buffer.concat(chunks));
}

/** A Headers object as Node takes headers (it joins repeated names already). */
function recordOf(headers: Headers | undefined): Record<string, string> {
  const record: Record<string, string> = {};
  headers?.forEach((value, name) => {
    record[name] = value;
  });
  return record;
}
