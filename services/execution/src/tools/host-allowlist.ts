/**
 * Host patterns of the `http` tool allowlist (api.md "Tools"), the same kind the catalog checks
 * when a tool is saved: `api.example.com` (that host only) or `*.example.com` (any subdomain, at
 * any depth, not `example.com` itself). IP literals are written as they appear in URLs
 * (`127.0.0.1`, `[::1]`). Matching is case-insensitive and ignores a trailing dot.
 */
import { isIP } from "node:net";

/** Hosts `http` tools may call; `byOrganization` narrows it: listed organizations must match both. */
export interface HostAllowlist {
  hosts: readonly string[];
  byOrganization?: ReadonlyMap<string, readonly string[]>;
}

const LABEL = /^[a-z0-9_-]+$/;

/** A host (or a wildcard's suffix) in the WHATWG URL's spelling: lower case, punycode, IPv4 in dotted decimal. */
function canonicalHost(raw: string): string | undefined {
  let url: URL;
  try {
    url = new URL(`http://${raw}/`);
  } catch {
    return undefined;
  }
  // Anything beyond a bare host (a port, a path, credentials) is not a host pattern.
  if (
    url.port !== "" ||
    url.username !== "" ||
    url.password !== "" ||
    `${url.pathname}${url.search}${url.hash}` !== "/"
  ) {
    return undefined;
  }
  const host = url.hostname.replace(/\.$/, "");
  if (host.startsWith("[")) return host;
  return host.split(".").every((label) => LABEL.test(label)) ? host : undefined;
}

/** A configured pattern, normalized; throws when it is not a host or `*.` host pattern. */
export function parseHostPattern(raw: string): string {
  let text = raw.trim();
  if (text.includes(":") && !text.startsWith("[")) text = `[${text}]`;
  const wildcard = text.startsWith("*.");
  const host = canonicalHost(wildcard ? text.slice(2) : text);
  if (host === undefined || (wildcard && isIP(host.replace(/^\[|\]$/g, "")) !== 0)) {
    throw new Error(`invalid host pattern "${raw}": use "api.example.com", "*.example.com" or an IP address`);
  }
  return wildcard ? `*.${host}` : host;
}

/** Comma- or whitespace-separated host patterns, e.g. `api.example.com, *.weather.example`. */
export function parseHostPatterns(text: string): string[] {
  return text
    .split(/[\s,]+/)
    .filter((p) => p !== "")
    .map(parseHostPattern);
}

/** `host` as `URL.hostname` gives it; `pattern` as `parseHostPattern` returns it. */
export function hostMatches(pattern: string, host: string): boolean {
  const h = host.toLowerCase().replace(/\.$/, "");
  if (pattern.startsWith("*.")) return h.length > pattern.length - 1 && h.endsWith(pattern.slice(1));
  return h === pattern;
}

export function matchesAnyPattern(patterns: readonly string[], host: string): boolean {
  return patterns.some((p) => hostMatches(p, host));
}

export function isHostAllowed(allowlist: HostAllowlist, host: string, organizationId?: string): boolean {
  if (!matchesAnyPattern(allowlist.hosts, host)) return false;
  const narrowed = organizationId === undefined ? undefined : allowlist.byOrganization?.get(organizationId);
  return narrowed === undefined || matchesAnyPattern(narrowed, host);
}

/** The allowlist with every pattern normalized; throws on a malformed one. */
export function normalizeAllowlist(allowlist: HostAllowlist): HostAllowlist {
  const byOrganization = allowlist.byOrganization
    ? new Map([...allowlist.byOrganization].map(([org, patterns]) => [org, patterns.map(parseHostPattern)]))
    : undefined;
  return { hosts: allowlist.hosts.map(parseHostPattern), ...(byOrganization ? { byOrganization } : {}) };
}
