/**
 * Outbound HTTP under the http tools' SSRF rules, for other services (webhook deliveries): resolve
 * once and check every address (`checkedAddressesOf`), connect only to those (`sendPinnedRequest`),
 * follow no redirect.
 */
export { classifyAddress } from "./address-policy.js";
export { checkedAddressesOf, type ResolveHost, resolveWithDns } from "./http-tool.js";
export { bareHostname, isRedirect, type PinnedResponse, sendPinnedRequest } from "./pinned-request.js";
export { ToolFailure as OutboundFailure } from "./tool-failure.js";
