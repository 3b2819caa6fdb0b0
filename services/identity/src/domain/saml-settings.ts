import { X509Certificate } from "node:crypto";
import { type MappedRole, mappingKey } from "./mapped-roles.js";
import { Issues } from "./rules.js";

/**
 * The rules of an organization's SAML settings (docs/security.md "SAML sign-in"): what an owner or
 * admin may save, each refusal naming its field. The IdP's SSO URL is where browsers are sent, so
 * it must be https; plain http is taken for a loopback host only (an IdP on the same machine, as
 * in tests). The certificate must parse as X.509 and not have expired.
 */
export interface SamlSettingsInput {
  enabled: boolean;
  idpEntityId: string;
  idpSsoUrl: string;
  idpCertificate: string;
  roleAttribute: string;
  roleMapping: Record<string, string>;
  defaultRole: string;
  allowIdpInitiated: boolean;
}

export interface CheckedSamlSettings {
  enabled: boolean;
  idpEntityId: string;
  idpSsoUrl: string;
  /** Normalized PEM. */
  idpCertificate: string;
  certificateFingerprint: string;
  certificateSubject: string;
  certificateNotAfter: Date;
  roleAttribute: string;
  /** Lower-cased values (the keys the role attribute's values are looked up by). */
  roleMapping: { value: string; role: MappedRole }[];
  defaultRole: MappedRole;
  allowIdpInitiated: boolean;
}

const MAPPED_ROLES: readonly string[] = ["admin", "member", "viewer"];
const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"]);
const MAX_MAPPINGS = 100;
const MAX_CERTIFICATE_CHARS = 16_384;

/** `https:`, or `http:` to a loopback host; undefined when it may be saved, else the issue. */
export function ssoUrlIssue(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return "must be an absolute URL";
  }
  if (url.protocol === "https:") return undefined;
  if (url.protocol === "http:" && LOOPBACK_HOSTS.has(url.hostname)) return undefined;
  return "must be an https URL (http only for 127.0.0.1, localhost or [::1])";
}

/** A PEM certificate, or its bare base64 body as Entra's "Certificate (Base64)" shows it, as PEM. */
export function pemOf(text: string): string {
  const trimmed = text.trim();
  if (trimmed.includes("-----BEGIN")) return `${trimmed}\n`;
  const body = trimmed.replace(/\s+/g, "");
  return `-----BEGIN CERTIFICATE-----\n${body.match(/.{1,64}/g)?.join("\n") ?? ""}\n-----END CERTIFICATE-----\n`;
}

/** The parsed certificate, or the issue with it. */
export function parseCertificate(text: string, now: Date): X509Certificate | string {
  if (text.trim() === "") return "is required";
  if (text.length > MAX_CERTIFICATE_CHARS) return `must be at most ${MAX_CERTIFICATE_CHARS} characters`;
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(pemOf(text));
  } catch {
    return "is not a PEM X.509 certificate";
  }
  if (new Date(cert.validTo).getTime() <= now.getTime()) return `expired on ${new Date(cert.validTo).toISOString()}`;
  return cert;
}

function checkMapping(issues: Issues, mapping: Record<string, string>) {
  const entries = Object.entries(mapping);
  if (entries.length > MAX_MAPPINGS) issues.add("roleMapping", `must hold at most ${MAX_MAPPINGS} values`);
  const out: { value: string; role: MappedRole }[] = [];
  for (const [value, role] of entries.slice(0, MAX_MAPPINGS)) {
    const key = mappingKey(value);
    if (key === "" || key.length > 256) issues.add(`roleMapping.${value}`, "must be 1 to 256 characters");
    else if (!MAPPED_ROLES.includes(role)) {
      issues.add(`roleMapping.${value}`, 'must be "admin", "member" or "viewer" (SAML never gives the owner role)');
    } else out.push({ value: key, role: role as MappedRole });
  }
  return out;
}

/** The settings to store, or invalid_argument naming every field at fault. */
export function checkSamlSettings(input: SamlSettingsInput, now: Date): CheckedSamlSettings {
  const issues = new Issues();
  const idpEntityId = issues.text("idpEntityId", input.idpEntityId, { max: 1000 });
  const idpSsoUrl = input.idpSsoUrl.trim();
  const urlIssue = idpSsoUrl === "" ? "is required" : idpSsoUrl.length > 2000 ? "is too long" : ssoUrlIssue(idpSsoUrl);
  if (urlIssue) issues.add("idpSsoUrl", urlIssue);
  const cert = parseCertificate(input.idpCertificate, now);
  if (typeof cert === "string") issues.add("idpCertificate", cert);
  const roleAttribute = issues.text("roleAttribute", input.roleAttribute, { min: 0, max: 256 });
  const roleMapping = checkMapping(issues, input.roleMapping);
  const defaultRole = input.defaultRole === "" ? "member" : input.defaultRole;
  if (!MAPPED_ROLES.includes(defaultRole)) {
    issues.add("defaultRole", 'must be "admin", "member" or "viewer" (SAML never gives the owner role)');
  }
  if (roleMapping.length > 0 && roleAttribute === "") issues.add("roleAttribute", "is required with a roleMapping");
  issues.throwIfAny("invalid SAML settings");
  const certificate = cert as X509Certificate;
  return {
    enabled: input.enabled,
    idpEntityId,
    idpSsoUrl,
    idpCertificate: certificate.toString(),
    certificateFingerprint: certificate.fingerprint256,
    certificateSubject: certificate.subject.replace(/\n/g, ", "),
    certificateNotAfter: new Date(certificate.validTo),
    roleAttribute,
    roleMapping,
    defaultRole: defaultRole as MappedRole,
    allowIdpInitiated: input.allowIdpInitiated,
  };
}
