/**
 * Host patterns: the one parser and the one matcher of every host list in the platform
 * (HTTP_TOOL_ALLOWED_HOSTS and its per-organization narrowing, HTTP_TOOL_PRIVATE_HOSTS,
 * WEBHOOK_PRIVATE_HOSTS). The catalog checks a tool's URL with `isUrlAllowed` when the tool is
 * saved and execution checks it with the same function when the tool is called, so a tool saved
 * under a rule is callable under that rule.
 *
 * Canonical form (docs/configuration.md "Host patterns"): a pattern is brought to the spelling the
 * WHATWG URL parser gives a URL's host, so that comparing strings is comparing hosts:
 * - names: lower case, IDN to punycode (`url.domainToASCII`: `Bücher.example` is
 *   `xn--bcher-kva.example`), one trailing dot dropped; labels of letters, digits, `-` and `_`
 *   (underscores appear in real DNS names and the URL parser and resolvers accept them), at most
 *   63 characters each and 253 in all;
 * - IPv4 in dotted decimal (`127.1` and `0x7f.1` are `127.0.0.1`), IPv6 bracketed and compressed
 *   (`::1` and `[0:0::1]` are `[::1]`);
 * - `*.example.com`: any subdomain of example.com at any depth, never example.com itself; a
 *   wildcard is the whole first label, and never stands over an IP address.
 * Anything else (a scheme, port, path, credentials, `%`, a wildcard elsewhere) is refused.
 */
import { isIP } from "node:net";
import { domainToASCII, domainToUnicode } from "node:url";

declare const canonical: unique symbol;

/** A pattern in canonical form; only `parseHostPattern(s)` make them. */
export type HostPattern = string & { readonly [canonical]: true };

/**
 * Hosts `http` tools may call. `byOrganization` narrows the list for some organizations: their
 * hosts must match both `hosts` and their own list.
 */
export interface HostAllowlist {
  readonly hosts: readonly HostPattern[];
  readonly byOrganization?: ReadonlyMap<string, readonly HostPattern[]>;
}

export const EMPTY_HOST_ALLOWLIST: HostAllowlist = { hosts: [] };

/** A configured entry that is not a host pattern; `entry` is the text as written. */
export class HostPatternError extends Error {
  constructor(
    readonly entry: string,
    reason: string,
  ) {
    super(`"${entry.length > 100 ? `${entry.slice(0, 100)}…` : entry}" ${reason}`);
    this.name = "HostPatternError";
  }
}

const LABEL = /^[a-z0-9_-]{1,63}$/;
const MAX_NAME_LENGTH = 253;
/**
 * Characters that end a host in a URL (domainToASCII would quietly cut `a.com/x` to `a.com`), or
 * that the URL parser decodes (`%`), or that no host holds.
 */
const NOT_IN_A_HOST = /[/?#\\@%\s\p{Cc}]/u;
const USAGE = 'is not a host pattern: write "api.example.com", "*.example.com", "203.0.113.7" or "[2001:db8::1]"';

/**
 * `text` (a host, without scheme or port) in the URL parser's spelling, or undefined when it is
 * not a host a pattern may name. The same function canonicalizes patterns and the hosts of URLs.
 */
export function canonicalHost(text: string): string | undefined {
  if (text === "" || NOT_IN_A_HOST.test(text)) return undefined;
  const bracketed = text.includes(":") && !text.startsWith("[") ? `[${text}]` : text;
  const ascii = domainToASCII(bracketed);
  if (ascii === "") return undefined;
  if (ascii.startsWith("[") || isIP(ascii) !== 0) return ascii;
  const name = ascii.endsWith(".") ? ascii.slice(0, -1) : ascii;
  if (name.length > MAX_NAME_LENGTH || !name.split(".").every(isNameLabel)) return undefined;
  return name;
}

/**
 * A label of a name: `LABEL`'s characters, and an `xn--` label only when it is punycode that decodes
 * (Node 22+'s domainToASCII passes `xn--a` through unchanged; Node 20's refused it).
 */
function isNameLabel(label: string): boolean {
  return LABEL.test(label) && (!label.startsWith("xn--") || !domainToUnicode(label).startsWith("xn--"));
}

function isIpLiteral(host: string): boolean {
  return host.startsWith("[") || isIP(host) !== 0;
}

/** One configured entry in canonical form; throws a HostPatternError when it is not a pattern. */
export function parseHostPattern(raw: string): HostPattern {
  const text = raw.trim();
  const wildcard = text.startsWith("*.");
  const host = canonicalHost(wildcard ? text.slice(2) : text);
  if (host === undefined) throw new HostPatternError(raw, USAGE);
  if (wildcard && isIpLiteral(host)) {
    throw new HostPatternError(raw, "is a wildcard over an IP address, which matches no host: list the address itself");
  }
  return (wildcard ? `*.${host}` : host) as HostPattern;
}

/** The entries of a list separated by commas and/or whitespace (`a.example, *.b.example c.example`). */
export function hostListEntries(text: string): string[] {
  return text.split(/[\s,]+/).filter((entry) => entry !== "");
}

/** A list's patterns (`hostListEntries`), each canonical, duplicates dropped; throws on the first bad entry. */
export function parseHostPatterns(text: string): HostPattern[] {
  return [...new Set(hostListEntries(text).map(parseHostPattern))];
}

/** Whether `host`, canonical (`canonicalHost`), is matched by `pattern`. */
function matches(pattern: HostPattern, host: string): boolean {
  if (!pattern.startsWith("*.")) return host === pattern;
  const suffix = pattern.slice(1); // ".example.com"
  return host.length > suffix.length && host.endsWith(suffix) && !isIpLiteral(host);
}

/** The canonical host of a URL; undefined when it could not match any pattern. */
function hostOfUrl(url: URL): string | undefined {
  return canonicalHost(url.hostname);
}

/** Whether the host of `url` matches one of `patterns` (WEBHOOK_PRIVATE_HOSTS, HTTP_TOOL_PRIVATE_HOSTS). */
export function urlMatchesAny(patterns: readonly HostPattern[], url: URL): boolean {
  const host = hostOfUrl(url);
  return host !== undefined && patterns.some((p) => matches(p, host));
}

/**
 * Whether an `http` tool of `organizationId` may call `url`: its host is on the list and, when the
 * organization has a narrowed list, on that one too. The catalog (at save) and execution (at call)
 * both decide with this function.
 */
export function isUrlAllowed(allowlist: HostAllowlist, url: URL, organizationId?: string): boolean {
  if (!urlMatchesAny(allowlist.hosts, url)) return false;
  const narrowed = organizationId === undefined ? undefined : allowlist.byOrganization?.get(organizationId);
  return narrowed === undefined || urlMatchesAny(narrowed, url);
}
