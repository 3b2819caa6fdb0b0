/**
 * Kiln as a SAML 2.0 service provider for one organization (docs/security.md "SAML sign-in"), on
 * @node-saml/node-saml: the AuthnRequest (HTTP-Redirect), the SP metadata, and the check of a
 * posted Response. node-saml verifies the XML signature with the organization's IdP certificate
 * (the assertion must be signed), the audience, NotBefore/NotOnOrAfter with a small skew and
 * InResponseTo; this module adds what it leaves to the SP: the issuer, the Response's
 * Destination, the bearer confirmation's Recipient, and the assertion's id and lifetime for the
 * replay check.
 */
import { randomUUID } from "node:crypto";
import { type CacheProvider, type Profile, SAML, ValidateInResponseTo } from "@node-saml/node-saml";
import { DOMParser } from "@xmldom/xmldom";

export const EMAIL_NAME_ID = "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress";
/** The clock difference tolerated between the IdP and Kiln. */
export const CLOCK_SKEW_MS = 60_000;
/** How long an AuthnRequest may stay unanswered (identity keeps its state as long). */
const REQUEST_TTL_MS = 10 * 60_000;

/** The SP's addresses for one organization, from the origin the browser reached the gateway at. */
export interface SpUrls {
  entityId: string;
  acsUrl: string;
  metadataUrl: string;
}

export const spUrlsOf = (origin: string, organizationId: string): SpUrls => {
  const base = `${origin}/saml/${encodeURIComponent(organizationId)}`;
  return { entityId: `${base}/metadata`, acsUrl: `${base}/acs`, metadataUrl: `${base}/metadata` };
};

export interface IdpSettings {
  idpEntityId: string;
  idpSsoUrl: string;
  idpCertificate: string;
}

/** What a verified response says, for identity. */
export interface VerifiedAssertion {
  assertionId: string;
  /** Until when the assertion could be presented (its latest NotOnOrAfter, plus the skew). */
  expiresAt: Date;
  nameId: string;
  fullName: string;
  /** Every attribute's values, by name. */
  attributes: Record<string, string[]>;
  /** The AuthnRequest it answers; empty for an IdP-initiated response. */
  inResponseTo: string;
}

/** A response that fails a check: the reason is answered and audited. */
export class SamlRefusal extends Error {}

/** node-saml's cache of outstanding requests: only the one request this sign-in's state names. */
function oneRequest(requestId: string | undefined): CacheProvider {
  return {
    saveAsync: async () => null,
    getAsync: async (key) => (requestId && key === requestId ? new Date().toISOString() : null),
    removeAsync: async () => null,
  };
}

function samlOf(idp: IdpSettings, sp: SpUrls, requestId?: string) {
  return new SAML({
    callbackUrl: sp.acsUrl,
    entryPoint: idp.idpSsoUrl,
    issuer: sp.entityId,
    audience: sp.entityId,
    idpCert: idp.idpCertificate,
    identifierFormat: EMAIL_NAME_ID,
    wantAssertionsSigned: true,
    wantAuthnResponseSigned: false,
    acceptedClockSkewMs: CLOCK_SKEW_MS,
    signatureAlgorithm: "sha256",
    disableRequestedAuthnContext: true,
    // With a state, the response must answer its request; without one, a response that names a
    // request (its state lost or withheld) is refused, and only an unsolicited one may pass.
    validateInResponseTo: requestId ? ValidateInResponseTo.always : ValidateInResponseTo.ifPresent,
    requestIdExpirationPeriodMs: REQUEST_TTL_MS,
    cacheProvider: oneRequest(requestId),
    generateUniqueId: () => requestId ?? `_${randomUUID()}`,
  });
}

/** A fresh AuthnRequest id (an NCName: it starts with "_"). */
export const newRequestId = () => `_${randomUUID().replace(/-/g, "")}`;

/** The IdP's SSO URL with the deflated AuthnRequest `requestId` and the RelayState (HTTP-Redirect binding). */
export function authorizeUrl(idp: IdpSettings, sp: SpUrls, requestId: string, relayState: string): Promise<string> {
  return samlOf(idp, sp, requestId).getAuthorizeUrlAsync(relayState, undefined, {});
}

/** The SP metadata document: entity id, the ACS (HTTP-POST), NameID format emailAddress, signed assertions wanted. */
export function metadataXml(sp: SpUrls): string {
  const idp = { idpEntityId: "", idpSsoUrl: "https://idp.invalid/", idpCertificate: "unused" };
  return samlOf(idp, sp).generateServiceProviderMetadata(null, null);
}

type Xml2Js = { $?: Record<string, string>; _?: string; [k: string]: unknown };
const first = (v: unknown) => (Array.isArray(v) ? (v[0] as Xml2Js | undefined) : undefined);

/** The signed assertion's id, and its bearer confirmations' recipients and latest NotOnOrAfter. */
function assertionFacts(profile: Profile) {
  const assertion = (profile.getAssertion?.() as { Assertion?: Xml2Js } | undefined)?.Assertion;
  const subject = first(assertion?.Subject);
  const confirmations = (Array.isArray(subject?.SubjectConfirmation) ? subject.SubjectConfirmation : []) as Xml2Js[];
  const bearer = confirmations
    .filter((c) => c.$?.Method === "urn:oasis:names:tc:SAML:2.0:cm:bearer")
    .map((c) => first(c.SubjectConfirmationData)?.$ ?? {});
  const conditions = first(assertion?.Conditions)?.$ ?? {};
  const ends = [conditions.NotOnOrAfter, ...bearer.map((b) => b.NotOnOrAfter)]
    .map((t) => (t ? Date.parse(t) : Number.NaN))
    .filter((t) => Number.isFinite(t));
  return { id: assertion?.$?.ID ?? "", bearer, latestEnd: ends.length > 0 ? Math.max(...ends) : undefined };
}

/** The Response element's Destination, read from the posted XML (not covered by an assertion-only signature). */
function destinationOf(xml: string): string | undefined {
  const doc = new DOMParser().parseFromString(xml, "text/xml") as {
    documentElement?: { localName?: string; getAttribute(name: string): string | null };
  };
  const root = doc.documentElement;
  if (root?.localName !== "Response") return undefined;
  return root.getAttribute("Destination") || undefined;
}

const valuesOf = (v: unknown): string[] =>
  (Array.isArray(v) ? v : [v]).filter((x): x is string => typeof x === "string");

function attributesOf(profile: Profile): Record<string, string[]> {
  const attrs = (profile.attributes ?? {}) as Record<string, unknown>;
  return Object.fromEntries(Object.entries(attrs).map(([k, v]) => [k, valuesOf(v)]));
}

function fullNameOf(attributes: Record<string, string[]>): string {
  const pick = (...names: string[]) => names.map((n) => attributes[n]?.[0]).find(Boolean) ?? "";
  const display = pick("displayName", "name", "http://schemas.microsoft.com/identity/claims/displayname");
  if (display) return display;
  const given = pick("firstName", "givenName", "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/givenname");
  const family = pick("lastName", "surname", "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/surname");
  return `${given} ${family}`.trim();
}

/**
 * Verifies a posted `SAMLResponse`: signed by the IdP's certificate, for this SP, in time, and
 * answering `requestId` when the sign-in was SP-initiated. Throws SamlRefusal with the reason.
 */
export async function verifyResponse(
  idp: IdpSettings,
  sp: SpUrls,
  samlResponse: string,
  requestId: string | undefined,
): Promise<VerifiedAssertion> {
  let profile: Profile | null;
  try {
    ({ profile } = await samlOf(idp, sp, requestId).validatePostResponseAsync({ SAMLResponse: samlResponse }));
  } catch (e) {
    throw new SamlRefusal(`the SAML response was refused: ${(e as Error).message}`);
  }
  if (!profile) throw new SamlRefusal("the SAML response holds no assertion");
  if (profile.issuer !== idp.idpEntityId) {
    throw new SamlRefusal(`the assertion's issuer is not the organization's IdP (${idp.idpEntityId})`);
  }
  const destination = destinationOf(Buffer.from(samlResponse, "base64").toString("utf8"));
  if (destination !== undefined && destination !== sp.acsUrl) {
    throw new SamlRefusal(`the response's Destination is not this organization's ACS URL (${sp.acsUrl})`);
  }
  const facts = assertionFacts(profile);
  if (!facts.bearer.some((b) => b.Recipient === sp.acsUrl)) {
    throw new SamlRefusal(`the assertion's bearer Recipient is not this organization's ACS URL (${sp.acsUrl})`);
  }
  if (!facts.id) throw new SamlRefusal("the assertion has no ID");
  // The signed confirmation's InResponseTo counts too: an assertion-only signature leaves the
  // Response's own attribute open to removal, which must not make an answer look unsolicited.
  const answered =
    (typeof profile.inResponseTo === "string" ? profile.inResponseTo : "") ||
    (facts.bearer.find((b) => b.InResponseTo)?.InResponseTo ?? "");
  if (!requestId && answered) {
    throw new SamlRefusal("the response answers a sign-in request whose state did not come back with it");
  }
  const attributes = attributesOf(profile);
  return {
    assertionId: facts.id,
    expiresAt: new Date((facts.latestEnd ?? Date.now() + 3_600_000) + CLOCK_SKEW_MS),
    nameId: profile.nameID ?? "",
    fullName: fullNameOf(attributes),
    attributes,
    inResponseTo: answered,
  };
}
