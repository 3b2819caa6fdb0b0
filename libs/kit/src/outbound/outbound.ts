/**
 * Outbound HTTP under the platform's SSRF rules, for http tools (execution) and webhook deliveries:
 * resolve once and check every address (`checkedAddressesOf`), connect only to those
 * (`sendPinnedRequest`), follow no redirect. The host lists these rules take: host-patterns.ts.
 */
export { type AddressClass, type AddressScope, classifyAddress } from "./address-policy.js";
export { checkedAddressesOf, type ResolveHost, resolveWithDns } from "./checked-addresses.js";
export { type OutboundErrorCode, OutboundFailure } from "./outbound-failure.js";
export { bareHostname, isRedirect, type PinnedResponse, sendPinnedRequest } from "./pinned-request.js";
