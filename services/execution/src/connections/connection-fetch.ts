/**
 * The fetch a provider connection's calls go through: the outbound rules of http tools and webhooks
 * (docs/security.md), with PROVIDER_PRIVATE_HOSTS naming the hosts allowed private, loopback or
 * link-local addresses. Every socket's name resolution is checked (the addresses checked are the
 * addresses connected to, so a DNS answer that changes cannot move a call), an address literal is
 * checked before the call, and redirects are never followed (http-fetch.ts).
 */
import type { LookupAddress } from "node:dns";
import { isIP, type LookupFunction } from "node:net";
import { classifyAddress, OutboundFailure, type ResolveHost, resolveWithDns } from "@kiln/kit/outbound";
import { type HostPattern, urlMatchesAny } from "@kiln/kit/outbound/host-patterns";
import { createHttpFetch } from "@kiln/models/http-fetch";

export interface OutboundPolicy {
  privateHosts: readonly HostPattern[];
  /** Name resolution, default `dns.lookup`; tests point names at a local server. */
  resolve?: ResolveHost;
}

/** Why `address` may not be called for `host`, or undefined when it may. */
function refusalOf(host: string, address: string, privateHosts: readonly HostPattern[]): string | undefined {
  const { scope, range } = classifyAddress(address);
  const allowed = scope === "public" || (scope === "internal" && urlMatchesAny(privateHosts, hostUrl(host)));
  return allowed
    ? undefined
    : `${host} is (or resolves to) an address in the "${range}" range; PROVIDER_PRIVATE_HOSTS does not allow it`;
}

const hostUrl = (host: string) => new URL(`http://${isIP(host) === 6 ? `[${host}]` : host}/`);

function checkingLookup(policy: OutboundPolicy): LookupFunction {
  const resolve = policy.resolve ?? resolveWithDns;
  return (hostname, options, callback) => {
    resolve(hostname).then(
      (answers) => {
        const family = options.family === 4 || options.family === "IPv4" ? 4 : options.family === 6 ? 6 : 0;
        const usable: LookupAddress[] = answers.filter((a) => family === 0 || a.family === family);
        // One refused address refuses the host: the socket could pick any of them.
        const refused = answers.map((a) => refusalOf(hostname, a.address, policy.privateHosts)).find(Boolean);
        const first = usable[0];
        if (refused !== undefined || first === undefined) {
          const error: NodeJS.ErrnoException = new OutboundFailure(
            refused ? "address_not_allowed" : "network_error",
            refused ?? `host "${hostname}" has no address`,
          );
          error.code = refused ? "ADDRESS_NOT_ALLOWED" : "ENOTFOUND";
          callback(error, "", 0);
        } else if (options.all) callback(null, usable);
        else callback(null, first.address, first.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, "", 0),
    );
  };
}

/** A fetch under the outbound policy; a refused address rejects like a failed connection (`fetch failed`, cause OutboundFailure). */
export function createPolicyFetch(policy: OutboundPolicy): typeof fetch {
  const send = createHttpFetch({ lookup: checkingLookup(policy) });
  return (input, init) => {
    const url = new URL(typeof input === "string" || input instanceof URL ? input : input.url);
    if (url.protocol !== "http:" && url.protocol !== "https:")
      return Promise.reject(new TypeError("fetch failed", { cause: new Error("only http and https are called") }));
    const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
    // An address literal is never looked up: checked here.
    const refused = isIP(host) !== 0 ? refusalOf(host, host, policy.privateHosts) : undefined;
    if (refused !== undefined) {
      const cause = Object.assign(new OutboundFailure("address_not_allowed", refused), { code: "ADDRESS_NOT_ALLOWED" });
      return Promise.reject(new TypeError("fetch failed", { cause }));
    }
    return send(url.href, init);
  };
}
