import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { DomainError, type ErrorKind } from "../errors.js";
import { codeOfKind, remoteErrorOf, toConnectError } from "./connect-errors.js";

const KINDS: ErrorKind[] = [
  "invalid_argument",
  "not_found",
  "already_exists",
  "failed_precondition",
  "permission_denied",
  "unauthenticated",
  "resource_exhausted",
  "unavailable",
  "provider_error",
  "provider_timeout",
];

describe("connect errors", () => {
  it("carries every kind, its message and its issues to the caller", () => {
    for (const kind of KINDS) {
      const sent = toConnectError(new DomainError(kind, `a ${kind}`, [{ field: "name", issue: "is required" }]));
      expect(sent.code).toBe(codeOfKind(kind));
      expect(remoteErrorOf(sent)).toEqual({
        kind,
        message: `a ${kind}`,
        details: [{ field: "name", issue: "is required" }],
      });
    }
  });

  it("reads a bare code back as its kind; a deadline is unavailable, Unknown and Internal are internal", () => {
    expect(remoteErrorOf(new ConnectError("gone", Code.NotFound)).kind).toBe("not_found");
    expect(remoteErrorOf(new ConnectError("late", Code.DeadlineExceeded)).kind).toBe("unavailable");
    expect(remoteErrorOf(new ConnectError("odd", Code.Unknown))).toEqual({
      kind: "internal",
      message: "internal error",
      details: [],
    });
    expect(remoteErrorOf(new ConnectError("boom", Code.Internal)).kind).toBe("internal");
  });
});
