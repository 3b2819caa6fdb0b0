import { describe, expect, it } from "vitest";
import { KilnError, retryAfterMsOf } from "./kiln-error.js";
import { backoffMs } from "./transport.js";

describe("retryAfterMsOf", () => {
  const now = Date.parse("2026-11-23T12:00:00Z");

  it("reads seconds and HTTP dates, and nothing else", () => {
    expect(retryAfterMsOf("30", now)).toBe(30_000);
    expect(retryAfterMsOf(" 0 ", now)).toBe(0);
    expect(retryAfterMsOf("Mon, 23 Nov 2026 12:00:05 GMT", now)).toBe(5_000);
    expect(retryAfterMsOf("Mon, 23 Nov 2026 11:00:00 GMT", now)).toBe(0);
    expect(retryAfterMsOf(null, now)).toBeUndefined();
    expect(retryAfterMsOf("soon", now)).toBeUndefined();
    expect(retryAfterMsOf("-5", now)).toBeUndefined();
  });
});

describe("backoffMs", () => {
  it("doubles per attempt between half and all of its ceiling, up to 8 s", () => {
    expect(backoffMs(0, () => 0)).toBe(250);
    expect(backoffMs(0, () => 1)).toBe(500);
    expect(backoffMs(2, () => 0.5)).toBe(1_500);
    expect(backoffMs(10, () => 1)).toBe(8_000);
  });
});

describe("KilnError.fromResponse", () => {
  it("takes code, message, details and request id from the error envelope", () => {
    const body = {
      error: {
        code: "not_found",
        message: "no such prompt",
        details: [{ field: "id", issue: "x" }],
        requestId: "req_1",
      },
    };
    const error = KilnError.fromResponse(new Response(null, { status: 404 }), body);
    expect(error).toMatchObject({ status: 404, code: "not_found", message: "no such prompt", requestId: "req_1" });
    expect(error.details).toEqual([{ field: "id", issue: "x" }]);
  });

  it("names a status without an envelope (a proxy's page) by its code", () => {
    const response = new Response(null, { status: 503, headers: { "retry-after": "2", "x-request-id": "req_h" } });
    const error = KilnError.fromResponse(response, "<html>Service Unavailable</html>");
    expect(error).toMatchObject({ status: 503, code: "unavailable", requestId: "req_h", retryAfterMs: 2_000 });
    expect(error.message).toBe("HTTP 503: <html>Service Unavailable</html>");
    expect(KilnError.fromResponse(new Response(null, { status: 418 }), "").code).toBe("internal");
  });
});
