/**
 * What a receiver's URL must be when it is set (docs/webhooks.md "Delivery"): webhook endpoints
 * and the audit log's webhook stream (docs/governance.md "Streaming") check it the same way. A name
 * is resolved and its addresses checked per attempt (signed-post.ts); an address literal is checked
 * here already, so a private one is refused when it is set.
 */
import { isIP } from "node:net";
import { LIMITS } from "@kiln/kit/limits";
import { classifyAddress } from "@kiln/kit/outbound";
import { type HostPattern, urlMatchesAny } from "@kiln/kit/outbound/host-patterns";

export type UrlIssue = { field: string; issue: string };

const MAX_URL = LIMITS.webhookUrlChars;

/** Syntax and, for an address literal, the address rules; `field` names the URL in the issues. */
export function urlIssues(raw: string, privateHosts: readonly HostPattern[], field = "url"): UrlIssue[] {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return [{ field, issue: "must be an absolute http or https URL" }];
  }
  if (raw.length > MAX_URL) return [{ field, issue: `must be at most ${MAX_URL} characters` }];
  if (url.protocol !== "https:" && url.protocol !== "http:") return [{ field, issue: "must use http or https" }];
  if (url.username || url.password) return [{ field, issue: "must not carry credentials" }];
  if (url.hash) return [{ field, issue: "must not have a fragment" }];
  const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
  if (isIP(host) !== 0) {
    const { scope, range } = classifyAddress(host);
    if (scope === "unroutable" || (scope === "internal" && !urlMatchesAny(privateHosts, url))) {
      return [{ field, issue: `address ${host} is in the "${range}" range; webhooks call public addresses only` }];
    }
  }
  return [];
}
