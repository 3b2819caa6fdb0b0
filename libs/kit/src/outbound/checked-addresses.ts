/**
 * Where an outbound request may connect (http tools, webhook deliveries): the URL's host resolved
 * once and every address checked; the caller then connects to these and nowhere else
 * (`sendPinnedRequest`). IP literals reach here already normalized by the WHATWG URL parser
 * (`2130706433`, `0x7f.1` and `127.1` all read `127.0.0.1`).
 */
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { isIP } from "node:net";
import { classifyAddress } from "./address-policy.js";
import { type HostPattern, urlMatchesAny } from "./host-patterns.js";
import { OutboundFailure } from "./outbound-failure.js";
import { bareHostname } from "./pinned-request.js";

/** Every address of `hostname`, as `dns.lookup(hostname, {all: true})` gives them. */
export type ResolveHost = (hostname: string) => Promise<readonly LookupAddress[]>;

export const resolveWithDns: ResolveHost = (hostname) =>
  new Promise((resolve, reject) =>
    dnsLookup(hostname, { all: true }, (error, addresses) => (error ? reject(error) : resolve(addresses))),
  );

/** Resolves with `promise`, or rejects with the signal's reason as soon as it aborts. */
function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

function refusal(host: string, literal: boolean, range: string, who: string): OutboundFailure {
  const subject = literal ? `address ${host} is` : `host "${host}" resolves to an address`;
  return new OutboundFailure(
    "address_not_allowed",
    `${subject} in the "${range}" range; ${who} may only call public addresses unless the host is allowed private ones`,
  );
}

/**
 * Every address `url`'s host resolves to (once), each checked: none may be unroutable, and none
 * private, loopback or link-local unless the host matches `privateHosts`. Rejects with an
 * OutboundFailure, or with the signal's reason when it aborts.
 */
export async function checkedAddressesOf(
  url: URL,
  options: { privateHosts: readonly HostPattern[]; resolve: ResolveHost; signal: AbortSignal; who: string },
): Promise<LookupAddress[]> {
  const { signal } = options;
  const host = bareHostname(url);
  const literal = isIP(host) !== 0;
  let answers: readonly LookupAddress[];
  if (literal) answers = [{ address: host, family: isIP(host) }];
  else {
    try {
      answers = await abortable(options.resolve(host), signal);
    } catch {
      if (signal.aborted) throw signal.reason;
      throw new OutboundFailure("network_error", `could not resolve host "${host}"`);
    }
  }
  if (answers.length === 0) throw new OutboundFailure("network_error", `host "${host}" has no address`);
  const privateAllowed = urlMatchesAny(options.privateHosts, url);
  // One refused address refuses the host: the client could pick any of them.
  for (const { address } of answers) {
    const { scope, range } = classifyAddress(address);
    if (scope === "unroutable" || (scope === "internal" && !privateAllowed))
      throw refusal(host, literal, range, options.who);
  }
  return answers.map(({ address }) => ({ address, family: isIP(address) }));
}
