/**
 * A real SAML 2.0 identity provider on loopback for the SAML tests (docs/security.md "SAML sign-in"),
 * built on samlify's IdentityProvider: it reads the SP's AuthnRequest (HTTP-Redirect), signs the
 * Response and its Assertion with RSA-SHA256 as Okta and Entra do (the assertion signed, the
 * response too), and serves a minimal login page whose form posts the signed response to the
 * ACS (HTTP-POST). The key pair and self-signed certificate are made per IdP with `selfsigned`.
 * Tests also ask it for responses directly, with one thing changed (audience, times, key, id).
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import * as samlify from "samlify";
import { generate } from "selfsigned";

// The IdP side reads requests that a test made; their XML schema is Kiln's business, not this stub's.
samlify.setSchemaValidator({ validate: async () => "skipped" });

const { binding } = samlify.Constants.namespace;
const EMAIL_FORMAT = "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress";

export interface KeyPair {
  privateKey: string;
  certificate: string;
}

/** A throwaway RSA key and self-signed certificate (valid from an hour ago for `days`). */
export async function selfSignedKeyPair(commonName = "Kiln test IdP", days = 30): Promise<KeyPair> {
  const notBeforeDate = new Date(Date.now() - 3_600_000);
  const notAfterDate = new Date(Date.now() + days * 86_400_000);
  const pems = await generate([{ name: "commonName", value: commonName }], {
    keySize: 2048,
    notBeforeDate,
    notAfterDate,
    algorithm: "sha256",
  });
  return { privateKey: pems.private, certificate: pems.cert };
}

export interface ResponseOptions {
  /** The SP's entity id (the audience) and ACS URL. */
  sp: { entityId: string; acsUrl: string };
  email: string;
  /** Attribute name → values (a role or group attribute). */
  attributes?: Record<string, string[]>;
  /** The AuthnRequest answered; none: IdP-initiated. */
  inResponseTo?: string;
  /** Overrides, to make a response that must be refused. */
  audience?: string;
  destination?: string;
  recipient?: string;
  issuedAt?: Date;
  notBefore?: Date;
  notOnOrAfter?: Date;
  assertionId?: string;
  /** Another key signs (a forged response): the SP holds this IdP's certificate, not that key's. */
  signWith?: KeyPair;
}

export interface SamlTestIdp {
  entityId: string;
  /** The SSO URL (HTTP-Redirect binding) the SP sends browsers to. */
  ssoUrl: string;
  keys: KeyPair;
  /** A base64 signed Response, as the IdP posts it in `SAMLResponse`. */
  response(options: ResponseOptions): Promise<string>;
  /** The ID of an AuthnRequest the SP sent to the SSO URL (a Location header). */
  requestIdOf(redirectUrl: string, sp: { entityId: string; acsUrl: string }): Promise<string>;
  /** The e-mail address and attributes the login page signs in as next (the browser test's user). */
  setUser(email: string, attributes?: Record<string, string[]>): void;
  close(): Promise<void>;
}

const escapeXml = (s: string) =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

/** The login response template with an AuthnStatement and the attributes, their values as tags. */
function templateWith(attributes: Record<string, string[]>) {
  const values: Record<string, string> = {};
  let i = 0;
  const attrs = Object.entries(attributes)
    .map(([name, vs]) => {
      const inner = vs
        .map((v) => {
          values[`AttrValue${i}`] = v;
          return `<saml:AttributeValue xsi:type="xs:string">{AttrValue${i++}}</saml:AttributeValue>`;
        })
        .join("");
      return `<saml:Attribute Name="${escapeXml(name)}" NameFormat="urn:oasis:names:tc:SAML:2.0:attrname-format:basic">${inner}</saml:Attribute>`;
    })
    .join("");
  const authn =
    '<saml:AuthnStatement AuthnInstant="{IssueInstant}" SessionIndex="{AssertionID}"><saml:AuthnContext>' +
    "<saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef>" +
    "</saml:AuthnContext></saml:AuthnStatement>";
  const statement = attrs ? `<saml:AttributeStatement>${attrs}</saml:AttributeStatement>` : "";
  const context = samlify.SamlLib.defaultLoginResponseTemplate.context
    .replace("{AuthnStatement}", authn)
    .replace("{AttributeStatement}", statement);
  return { context, values };
}

function idpOf(entityId: string, ssoUrl: string, keys: KeyPair) {
  return samlify.IdentityProvider({
    entityID: entityId,
    privateKey: keys.privateKey,
    signingCert: keys.certificate,
    nameIDFormat: [EMAIL_FORMAT],
    singleSignOnService: [{ Binding: binding.redirect, Location: ssoUrl }],
    singleLogoutService: [{ Binding: binding.redirect, Location: `${ssoUrl}/logout` }],
  });
}

const spOf = (sp: { entityId: string; acsUrl: string }) =>
  samlify.ServiceProvider({
    entityID: sp.entityId,
    assertionConsumerService: [{ Binding: binding.post, Location: sp.acsUrl }],
    wantAssertionsSigned: true,
    wantMessageSigned: true,
  });

async function signedResponse(entityId: string, ssoUrl: string, keys: KeyPair, o: ResponseOptions) {
  const idp = idpOf(entityId, ssoUrl, o.signWith ?? keys);
  const issued = o.issuedAt ?? new Date();
  const notOnOrAfter = o.notOnOrAfter ?? new Date(issued.getTime() + 5 * 60_000);
  const { context, values } = templateWith(o.attributes ?? {});
  const id = `_${randomUUID()}`;
  const tags = {
    ID: id,
    AssertionID: o.assertionId ?? `_${randomUUID()}`,
    Destination: o.destination ?? o.sp.acsUrl,
    Audience: o.audience ?? o.sp.entityId,
    SubjectRecipient: o.recipient ?? o.sp.acsUrl,
    Issuer: entityId,
    IssueInstant: issued.toISOString(),
    StatusCode: samlify.Constants.StatusCode.Success,
    ConditionsNotBefore: (o.notBefore ?? issued).toISOString(),
    ConditionsNotOnOrAfter: notOnOrAfter.toISOString(),
    SubjectConfirmationDataNotOnOrAfter: notOnOrAfter.toISOString(),
    NameIDFormat: EMAIL_FORMAT,
    NameID: o.email,
    InResponseTo: o.inResponseTo,
    ...values,
  };
  const result = await idp.createLoginResponse(
    spOf(o.sp),
    { extract: {} },
    "post",
    { email: o.email },
    {
      customTagReplacement: () => ({ id, context: samlify.SamlLib.replaceTagsByValue(context, tags) }),
    },
  );
  return result.context;
}

async function formOf(req: IncomingMessage): Promise<URLSearchParams> {
  let body = "";
  for await (const chunk of req) body += chunk;
  return new URLSearchParams(body);
}

const page = (title: string, body: string) =>
  `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head><body><h1>${title}</h1>${body}</body></html>`;

/**
 * Starts the IdP on 127.0.0.1 (a free port); its login page signs in as `setUser`'s address.
 * `hostname` names it in its URLs: "localhost" makes it another site than a gateway at 127.0.0.1,
 * as a real IdP is, for a browser's SameSite rules.
 */
export async function startSamlTestIdp(hostname = "127.0.0.1"): Promise<SamlTestIdp> {
  const keys = await selfSignedKeyPair();
  let user = { email: "", attributes: {} as Record<string, string[]> };
  let base = "";
  const entityId = () => `${base}/metadata`;
  const ssoUrl = () => `${base}/sso`;

  async function requestOf(query: URLSearchParams, sp: { entityId: string; acsUrl: string }) {
    const flow = await idpOf(entityId(), ssoUrl(), keys).parseLoginRequest(spOf(sp), "redirect", {
      query: Object.fromEntries(query),
    } as never);
    const request = (
      flow.extract as { request?: { id?: string; assertionConsumerServiceUrl?: string; issuer?: string } }
    ).request;
    return {
      id: request?.id ?? "",
      acsUrl: request?.assertionConsumerServiceUrl ?? "",
      issuer: (flow.extract as { issuer?: string }).issuer ?? "",
    };
  }

  const server: Server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? "/", base);
      if (req.method === "GET" && url.pathname === "/sso") {
        // The login page: the AuthnRequest and RelayState ride along in hidden fields.
        const hidden = ["SAMLRequest", "RelayState"]
          .map((n) => `<input type="hidden" name="${n}" value="${escapeXml(url.searchParams.get(n) ?? "")}">`)
          .join("");
        res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
        res.end(
          page(
            "Local IdP sign-in",
            `<form method="post" action="/sso/login">${hidden}<label>E-mail <input name="email" value="${escapeXml(user.email)}"></label> <button type="submit">Sign in at the IdP</button></form>`,
          ),
        );
        return;
      }
      if (req.method === "POST" && url.pathname === "/sso/login") {
        const form = await formOf(req);
        const query = new URLSearchParams({ SAMLRequest: form.get("SAMLRequest") ?? "" });
        const parsed = await requestOf(query, { entityId: "", acsUrl: "" });
        const sp = { entityId: parsed.issuer, acsUrl: parsed.acsUrl };
        const samlResponse = await signedResponse(entityId(), ssoUrl(), keys, {
          sp,
          email: form.get("email") || user.email,
          attributes: user.attributes,
          inResponseTo: parsed.id,
        });
        const fields = { SAMLResponse: samlResponse, RelayState: form.get("RelayState") ?? "" };
        const inputs = Object.entries(fields)
          .map(([n, v]) => `<input type="hidden" name="${n}" value="${escapeXml(v)}">`)
          .join("");
        res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
        res.end(
          page(
            "Signed in at the IdP",
            `<form method="post" action="${escapeXml(sp.acsUrl)}">${inputs}<button type="submit">Continue to Kiln</button></form>`,
          ),
        );
        return;
      }
      res.writeHead(404).end();
    })().catch((e: unknown) => {
      res.writeHead(500, { "content-type": "text/plain" }).end(String(e));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://${hostname}:${(server.address() as AddressInfo).port}`;

  return {
    entityId: entityId(),
    ssoUrl: ssoUrl(),
    keys,
    response: (o) => signedResponse(entityId(), ssoUrl(), keys, o),
    async requestIdOf(redirectUrl, sp) {
      return (await requestOf(new URL(redirectUrl).searchParams, sp)).id;
    },
    setUser(email, attributes = {}) {
      user = { email, attributes };
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
