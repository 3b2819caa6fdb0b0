/**
 * `kiln internal-token --service <name> [--organization <org_…>] | --user <usr_…> [--ttl <seconds>]`: prints an internal
 * token signed with INTERNAL_AUTH_SECRET (read from the environment, never printed), for calling a
 * service's RPC directly (docs/operations.md, "Calling the services directly"). The token is the
 * one the gateway and the services send each other: HS256, iss "kiln-internal", aud
 * "kiln-services", sub the principal's id, typ its type, org the organization a service acts for
 * (without it, the platform principal, which acts in no organization), exp at most an hour away.
 */
import { createInternalTokens } from "@kiln/kit/auth";
import { type Principal, serviceFor } from "@kiln/kit/principal";

const MAX_TTL_SECONDS = 3_600;

export class UsageError extends Error {
  override name = "UsageError";
}

export const INTERNAL_TOKEN_USAGE =
  "usage: kiln internal-token --service <name> [--organization <org_…>] | --user <usr_…>\n" +
  "       [--ttl <seconds, default 300, at most 3600>]\n" +
  "       (a service token acts for its --organization only; without one, in no organization)\n" +
  "       (signs with INTERNAL_AUTH_SECRET from the environment)";

export async function internalTokenCommand(
  args: string[],
  env: Record<string, string | undefined> = process.env,
): Promise<string> {
  const options = new Map<string, string>();
  for (let i = 0; i < args.length; i += 2) {
    const name = args[i];
    const value = args[i + 1];
    if (!name?.startsWith("--") || value === undefined) throw new UsageError(INTERNAL_TOKEN_USAGE);
    options.set(name.slice(2), value);
  }
  for (const name of options.keys()) {
    if (!["service", "organization", "user", "ttl"].includes(name))
      throw new UsageError(`unknown option --${name}\n${INTERNAL_TOKEN_USAGE}`);
  }
  const service = options.get("service");
  const user = options.get("user");
  if ((service === undefined) === (user === undefined)) throw new UsageError(INTERNAL_TOKEN_USAGE);
  if (service !== undefined && !/^[a-z][a-z0-9-]{0,62}$/.test(service)) {
    throw new UsageError("--service must be a lower-case name (letters, digits, dashes)");
  }
  if (user !== undefined && !/^usr_[0-9a-f]{32}$/.test(user)) throw new UsageError("--user must be a user id (usr_…)");
  const organization = options.get("organization");
  if (organization !== undefined && service === undefined) {
    throw new UsageError("--organization goes with --service (a user acts in the organizations it belongs to)");
  }
  if (organization !== undefined && !/^org_[0-9a-f]{32}$/.test(organization)) {
    throw new UsageError("--organization must be an organization id (org_…)");
  }
  const ttlSeconds = Number(options.get("ttl") ?? 300);
  if (!Number.isInteger(ttlSeconds) || ttlSeconds < 1 || ttlSeconds > MAX_TTL_SECONDS) {
    throw new UsageError(`--ttl must be a whole number of seconds from 1 to ${MAX_TTL_SECONDS}`);
  }
  const secret = env.INTERNAL_AUTH_SECRET;
  if (!secret || secret.length < 32) {
    throw new UsageError("INTERNAL_AUTH_SECRET must be set (at least 32 characters), as for the services");
  }
  const principal: Principal =
    service === undefined
      ? { type: "user", id: user ?? "" }
      : organization === undefined
        ? { type: "service", id: service }
        : serviceFor(service, organization);
  return createInternalTokens(secret, { ttlSeconds }).sign(principal);
}
