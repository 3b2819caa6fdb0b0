import { Code, ConnectError } from "@connectrpc/connect";
import { DomainError } from "@kiln/kit/errors";
import { describe, expect, it } from "vitest";
import { envelopeOf } from "./errors.js";

describe("envelopeOf", () => {
  it("answers a call to a service that died (a stream CANCEL, a reset, a refused connection) 503 with Retry-After", () => {
    const reset = Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" });
    const failures = [
      new ConnectError("http/2 stream closed with error code CANCEL (0x8)", Code.Canceled),
      new ConnectError("read ECONNRESET", Code.Aborted, undefined, undefined, reset),
      new ConnectError("http/2 stream closed with error code INTERNAL_ERROR (0x2)", Code.Internal),
      new ConnectError("The session has been destroyed", Code.Internal, undefined, undefined, reset),
      new ConnectError("connect ECONNREFUSED 127.0.0.1:1", Code.Unavailable),
    ];
    for (const failure of failures) {
      const { status, body, headers } = envelopeOf(failure, "req_1");
      expect(status).toBe(503);
      expect(body.error.code).toBe("unavailable");
      expect(headers["retry-after"]).toBe("1");
    }
  });

  it("gives every 503 a Retry-After, and keeps a server's own internal error a 500", () => {
    expect(envelopeOf(new DomainError("unavailable", "store down"), "r").headers["retry-after"]).toBe("1");
    const internal = envelopeOf(new ConnectError("internal error", Code.Internal), "r");
    expect(internal.status).toBe(500);
    expect(internal.headers["retry-after"]).toBeUndefined();
  });
});
