/**
 * The one loader of the host variables (docs/configuration.md "Outbound requests"): every service
 * that reads one of them spreads its schema fragment from here and turns the text into patterns
 * with these functions, so the catalog, execution, the webhooks and the embedded launcher cannot
 * read the same variable two ways. A bad entry fails the configuration with an error naming the
 * variable and the entry.
 */
import { parseEnv, Type } from "../config.js";
import {
  type HostAllowlist,
  type HostPattern,
  HostPatternError,
  hostListEntries,
  parseHostPattern,
} from "./host-patterns.js";

/** The `http` tool allowlist (read by the catalog at save and by execution at call). */
export const HostAllowlistEnv = {
  /**
   * Hosts `http` tools may call, separated by commas and/or whitespace: `api.example.com`,
   * `*.example.com` (its subdomains), `203.0.113.7`, `[2001:db8::1]`. Empty: no `http` tool.
   */
  HTTP_TOOL_ALLOWED_HOSTS: Type.String({ default: "" }),
  /** Optional narrowing per organization, JSON: `{"org_…": ["api.example.com", …]}` (one pattern per item). */
  HTTP_TOOL_ALLOWED_HOSTS_BY_ORG: Type.String({ default: "" }),
};

/** Allowed hosts that `http` tools may also reach at private, loopback or link-local addresses (execution). */
export const HttpToolPrivateHostsEnv = {
  HTTP_TOOL_PRIVATE_HOSTS: Type.String({ default: "" }),
};

/** Hosts webhook URLs may resolve to private, loopback or link-local addresses for (webhook dispatchers). */
export const WebhookPrivateHostsEnv = {
  WEBHOOK_PRIVATE_HOSTS: Type.String({ default: "" }),
};

function configurationError(problems: readonly string[]): Error {
  return new Error(`invalid configuration: ${problems.join("; ")}`);
}

function reasonOf(error: unknown): string {
  if (error instanceof HostPatternError) return error.message;
  throw error;
}

/** The patterns of a list variable (`HTTP_TOOL_PRIVATE_HOSTS`, …); throws naming `variable` and every bad entry. */
export function hostPatternsOf(variable: string, text: string): HostPattern[] {
  const problems: string[] = [];
  const patterns: HostPattern[] = [];
  for (const entry of hostListEntries(text)) {
    try {
      patterns.push(parseHostPattern(entry));
    } catch (error) {
      problems.push(`${variable}: ${reasonOf(error)}`);
    }
  }
  if (problems.length > 0) throw configurationError(problems);
  return [...new Set(patterns)];
}

function byOrganizationOf(text: string): Map<string, HostPattern[]> | undefined {
  const name = "HTTP_TOOL_ALLOWED_HOSTS_BY_ORG";
  if (text.trim() === "") return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw configurationError([`${name} is not JSON`]);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw configurationError([`${name} must be {"<organizationId>": ["host", ...]}`]);
  }
  const problems: string[] = [];
  const byOrganization = new Map<string, HostPattern[]>();
  for (const [organizationId, entries] of Object.entries(parsed)) {
    const at = `${name}[${JSON.stringify(organizationId)}]`;
    if (!Array.isArray(entries) || !entries.every((e) => typeof e === "string")) {
      problems.push(`${at} must be a list of host patterns`);
      continue;
    }
    const patterns = entries.flatMap((entry: string, i) => {
      try {
        return [parseHostPattern(entry)];
      } catch (error) {
        problems.push(`${at}[${i}]: ${reasonOf(error)}`);
        return [];
      }
    });
    byOrganization.set(organizationId, [...new Set(patterns)]);
  }
  if (problems.length > 0) throw configurationError(problems);
  return byOrganization;
}

/** The allowlist of HTTP_TOOL_ALLOWED_HOSTS and HTTP_TOOL_ALLOWED_HOSTS_BY_ORG, as parseEnv read them. */
export function hostAllowlistOf(vars: {
  HTTP_TOOL_ALLOWED_HOSTS: string;
  HTTP_TOOL_ALLOWED_HOSTS_BY_ORG: string;
}): HostAllowlist {
  const hosts = hostPatternsOf("HTTP_TOOL_ALLOWED_HOSTS", vars.HTTP_TOOL_ALLOWED_HOSTS);
  const byOrganization = byOrganizationOf(vars.HTTP_TOOL_ALLOWED_HOSTS_BY_ORG);
  return byOrganization === undefined ? { hosts } : { hosts, byOrganization };
}

/** The allowlist from the environment; throws naming the variable and entry at fault. */
export function loadHostAllowlist(env: Record<string, string | undefined> = process.env): HostAllowlist {
  return hostAllowlistOf(parseEnv(Type.Object(HostAllowlistEnv), env));
}
