/**
 * The variables of provider connections (docs/configuration.md): the key that seals their
 * secrets at rest, and the hosts their base URLs may reach at private addresses.
 */
import { parseEnv, Type } from "@kiln/kit/config";
import { hostPatternsOf } from "@kiln/kit/outbound/host-config";
import type { HostPattern } from "@kiln/kit/outbound/host-patterns";
import { createSecretBox, parseSecretKeys, type SecretBox } from "@kiln/kit/secret-box";

export const ConnectionsEnv = {
  /** Hosts a connection's base URL may resolve to private, loopback or link-local addresses for (host patterns, as WEBHOOK_PRIVATE_HOSTS). */
  PROVIDER_PRIVATE_HOSTS: Type.String({ default: "" }),
  /** Seals connection keys at rest (docs/operations.md "Secret key"); unset: connections with keys are refused. */
  KILN_SECRET_KEY: Type.String({ default: "" }),
  KILN_SECRET_KEY_PREVIOUS: Type.String({ default: "" }),
};

export interface ConnectionsConfig {
  privateHosts: readonly HostPattern[];
  secrets?: SecretBox;
}

/** Throws naming the variable at fault, never a key. */
export function loadConnectionsConfig(env: Record<string, string | undefined> = process.env): ConnectionsConfig {
  const vars = parseEnv(Type.Object(ConnectionsEnv), env);
  return {
    privateHosts: hostPatternsOf("PROVIDER_PRIVATE_HOSTS", vars.PROVIDER_PRIVATE_HOSTS),
    ...(vars.KILN_SECRET_KEY !== "" && {
      secrets: createSecretBox(parseSecretKeys(vars.KILN_SECRET_KEY, vars.KILN_SECRET_KEY_PREVIOUS)),
    }),
  };
}
