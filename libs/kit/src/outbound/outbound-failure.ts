/**
 * An outbound call refused or failed by the SSRF rules or the network (`checkedAddressesOf`,
 * `sendPinnedRequest`). Callers turn it into their own record: an `http` tool's `error`
 * (execution's ToolFailure, same codes), a webhook attempt's `error` text.
 */
export type OutboundErrorCode =
  /** The host is (or resolves to) an address the caller may not reach: private, loopback, link-local… */
  | "address_not_allowed"
  /** DNS failure, or a host without an address. */
  | "network_error"
  /** The response body exceeded the caller's limit; reading stopped there. */
  | "response_too_large";

export class OutboundFailure extends Error {
  constructor(
    readonly code: OutboundErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "OutboundFailure";
  }
}
