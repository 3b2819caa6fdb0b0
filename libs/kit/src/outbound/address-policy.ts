/**
 * Which IP addresses an `http` tool may connect to (api.md "Tools"): public unicast addresses
 * only, unless the host is explicitly allowed private addresses. IPv6 forms that embed an IPv4
 * address (IPv4-mapped and -translated, NAT64 64:ff9b::/96, 6to4) are judged by that address.
 */
import * as IpAddr from "ipaddr.js";

// ipaddr.js is CommonJS whose exports Node cannot list for ESM (only `default`), and its types
// (`export =`) allow no default import under this tsconfig: take `default` when there is one (Node),
// else the namespace itself (a bundle).
const ipaddr = ((IpAddr as unknown as { default?: typeof IpAddr }).default ?? IpAddr) as typeof IpAddr;
type IPv4 = IpAddr.IPv4;
type IPv6 = IpAddr.IPv6;

/**
 * `public`: any host may reach it. `internal`: private, loopback, link-local, CGNAT,
 * unique-local, reserved and other special-purpose ranges; only hosts allowed private addresses
 * reach it. `unroutable`: unspecified, broadcast and multicast; never a destination.
 */
export type AddressScope = "public" | "internal" | "unroutable";

export interface AddressClass {
  scope: AddressScope;
  /** ipaddr.js's name of the range, e.g. "loopback", "private", "linkLocal", "unicast". */
  range: string;
}

const UNROUTABLE = new Set(["unspecified", "broadcast", "multicast"]);
/** Global unicast IPv6 space (2000::/3); anything else that ipaddr.js calls "unicast" is unassigned. */
const GLOBAL_UNICAST_V6 = ipaddr.IPv6.parse("2000::");
/** NAT64's well-known prefix 64:ff9b::/96 (RFC 6052), which carries the IPv4 address in its last 32 bits. */
const NAT64_WELL_KNOWN = ipaddr.IPv6.parse("64:ff9b::");

function classifyV4(address: IPv4): AddressClass {
  const range = address.range();
  if (range === "unicast") return { scope: "public", range };
  return { scope: UNROUTABLE.has(range) ? "unroutable" : "internal", range };
}

/** The IPv4 address in bits `from`..`from + 31` of an IPv6 address. */
function embeddedV4(address: IPv6, fromBit: number): IPv4 {
  const bytes = address.toByteArray();
  const at = fromBit / 8;
  return new ipaddr.IPv4(bytes.slice(at, at + 4));
}

function classifyV6(address: IPv6): AddressClass {
  const range = address.range();
  switch (range) {
    case "ipv4Mapped": // ::ffff:a.b.c.d
    case "rfc6145": // ::ffff:0:a.b.c.d
      return classifyEmbedded(embeddedV4(address, 96), range);
    case "rfc6052": // 64:ff9b::/96 carries the IPv4 address last; 64:ff9b:1::/48 is network-specific
      return address.match(NAT64_WELL_KNOWN, 96)
        ? classifyEmbedded(embeddedV4(address, 96), range)
        : { scope: "internal", range };
    case "6to4": // 2002:AABB:CCDD::/48
      return classifyEmbedded(embeddedV4(address, 16), range);
    case "unicast":
      return address.match(GLOBAL_UNICAST_V6, 3)
        ? { scope: "public", range }
        : { scope: "internal", range: "reserved" };
    default:
      return { scope: UNROUTABLE.has(range) ? "unroutable" : "internal", range };
  }
}

function classifyEmbedded(v4: IPv4, via: string): AddressClass {
  const inner = classifyV4(v4);
  return inner.scope === "public"
    ? { scope: "public", range: via }
    : { scope: inner.scope, range: `${via}:${inner.range}` };
}

/**
 * Classifies an address as a resolver or a URL gives it (`10.0.0.1`, `::1`, `[::1]`). Anything
 * that is not a plain IP address (zone ids, odd IPv4 spellings) is `unroutable`: addresses reach
 * this point already normalized, so an odd one is refused rather than guessed at.
 */
export function classifyAddress(text: string): AddressClass {
  const bare = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text;
  if (ipaddr.IPv4.isValidFourPartDecimal(bare)) return classifyV4(ipaddr.IPv4.parse(bare));
  if (!bare.includes("%") && ipaddr.IPv6.isValid(bare)) return classifyV6(ipaddr.IPv6.parse(bare));
  return { scope: "unroutable", range: "invalid" };
}
