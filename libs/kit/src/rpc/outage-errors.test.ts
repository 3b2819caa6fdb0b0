import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { ExecutionService } from "@kiln/proto/execution";
import { MongoBulkWriteError, MongoNetworkError, MongoServerError, MongoTopologyClosedError } from "mongodb";
import { describe, expect, it } from "vitest";
import { executionTestService, testTokens } from "../../test/test-services.js";
import { BusUnavailableError } from "../bus/bus.js";
import { isMongoUnavailable } from "../store/mongo-store.js";
import { StoreUnavailableError } from "../store/store.js";
import { createForwardInterceptor } from "./auth-interceptor.js";
import { remoteErrorOf } from "./connect-errors.js";
import { buildRpcServer } from "./rpc-server.js";
import { createDirectTransport, createNetworkTransport } from "./transport.js";

const caller = [createForwardInterceptor(testTokens, { type: "service", id: "caller" })];

/** A service whose ListModels fails with `error`. */
const failingWith = (error: unknown) =>
  executionTestService("failing", {
    async listModels() {
      throw error;
    },
  });

describe("a store or bus outage in a handler", () => {
  it("reaches an internal caller as Connect's Unavailable, over the wire and in process", async () => {
    const server = await buildRpcServer(failingWith(new StoreUnavailableError(new Error("connection refused"))));
    const url = await server.app.listen({ host: "127.0.0.1", port: 0 });
    const network = createNetworkTransport({ baseUrl: url, interceptors: caller });
    try {
      const error = ConnectError.from(
        await createClient(ExecutionService, network.transport)
          .listModels({})
          .catch((e) => e),
      );
      expect(error.code).toBe(Code.Unavailable);
      expect(remoteErrorOf(error)).toEqual({
        kind: "unavailable",
        message: "the document store is unavailable; retry later",
        details: [],
      });
    } finally {
      network.close();
      await server.app.close();
    }
    // Found in the cause chain too: a service that wrapped the bus's refusal.
    const wrapped = new Error("could not queue", { cause: new BusUnavailableError(new Error("closed")) });
    const direct = createClient(ExecutionService, createDirectTransport(failingWith(wrapped), caller));
    const error = ConnectError.from(await direct.listModels({}).catch((e) => e));
    expect(error.code).toBe(Code.Unavailable);
    expect(error.rawMessage).toBe("the message bus is unavailable; retry later");
  });

  it("leaves any other failure internal", async () => {
    const direct = createClient(ExecutionService, createDirectTransport(failingWith(new Error("boom")), caller));
    expect(ConnectError.from(await direct.listModels({}).catch((e) => e)).code).toBe(Code.Internal);
  });
});

describe("isMongoUnavailable", () => {
  it("knows the driver's connection failures and the server's transient codes, nothing else", () => {
    expect(isMongoUnavailable(new MongoNetworkError("connection 3 to 127.0.0.1:27017 closed"))).toBe(true);
    expect(isMongoUnavailable(new MongoTopologyClosedError())).toBe(true);
    expect(isMongoUnavailable(new MongoServerError({ message: "shutting down", code: 91 }))).toBe(true);
    expect(isMongoUnavailable(new MongoServerError({ message: "E11000 duplicate key", code: 11000 }))).toBe(false);
    expect(isMongoUnavailable(new Error("connection refused"))).toBe(false);
    // A socket error the driver let through as it was, when the server stopped mid-write.
    const epipe = Object.assign(new Error("This socket has been ended by the other party"), { code: "EPIPE" });
    expect(isMongoUnavailable(epipe)).toBe(true);
    // An unordered insert (a group of runs, a flush's claims) cut off as the server stopped: the
    // driver wraps its connection error in a bulk write error (a 500 in the fault suite before).
    const cutOff = new MongoBulkWriteError(new MongoTopologyClosedError(), {} as never);
    expect(isMongoUnavailable(cutOff)).toBe(true);
    const clash = new MongoBulkWriteError({ message: "E11000", code: 11000, writeErrors: [] } as never, {} as never);
    expect(isMongoUnavailable(clash)).toBe(false);
  });
});
