/**
 * The service provider's checks of a posted SAML response (issue #51, docs/security.md "SAML
 * sign-in"), against responses signed by a real IdP (samlify, in @kiln/testing/saml-idp): a good
 * one passes with its id, NameID and attributes; each broken one is refused with its reason.
 */
import { type SamlTestIdp, selfSignedKeyPair, startSamlTestIdp } from "@kiln/testing/saml-idp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authorizeUrl, metadataXml, newRequestId, spUrlsOf, verifyResponse } from "./saml-sp.js";

let idp: SamlTestIdp;
const sp = spUrlsOf("http://127.0.0.1:8080", "org_0123");
const target = { entityId: sp.entityId, acsUrl: sp.acsUrl };
const settings = () => ({ idpEntityId: idp.entityId, idpSsoUrl: idp.ssoUrl, idpCertificate: idp.keys.certificate });

beforeAll(async () => {
  idp = await startSamlTestIdp();
});
afterAll(() => idp?.close());

const refusal = (p: Promise<unknown>) =>
  p.then(
    () => "accepted",
    (e: Error) => e.message,
  );

describe("verifyResponse", () => {
  it("accepts an IdP-initiated response signed by the IdP, with its id, NameID and attributes", async () => {
    const response = await idp.response({ sp: target, email: "ada@example.com", attributes: { groups: ["a", "b"] } });
    const v = await verifyResponse(settings(), sp, response, undefined);
    expect(v.nameId).toBe("ada@example.com");
    expect(v.attributes.groups).toEqual(["a", "b"]);
    expect(v.assertionId).toMatch(/^_/);
    expect(v.inResponseTo).toBe("");
    expect(v.expiresAt.getTime()).toBeGreaterThan(Date.now() + 4 * 60_000);
  });

  it("accepts an SP-initiated response that answers the request", async () => {
    const requestId = newRequestId();
    const response = await idp.response({ sp: target, email: "ada@example.com", inResponseTo: requestId });
    expect((await verifyResponse(settings(), sp, response, requestId)).inResponseTo).toBe(requestId);
  });

  it("refuses an answer to another request, and an answer without its state", async () => {
    const response = await idp.response({ sp: target, email: "ada@example.com", inResponseTo: newRequestId() });
    expect(await refusal(verifyResponse(settings(), sp, response, newRequestId()))).toMatch(/InResponseTo/);
    expect(await refusal(verifyResponse(settings(), sp, response, undefined))).toMatch(/InResponseTo|state/);
  });

  it("refuses a response signed by another key", async () => {
    const response = await idp.response({ sp: target, email: "ada@example.com", signWith: await selfSignedKeyPair() });
    expect(await refusal(verifyResponse(settings(), sp, response, undefined))).toMatch(/signature/i);
  });

  it("refuses a tampered response", async () => {
    const xml = Buffer.from(await idp.response({ sp: target, email: "ada@example.com" }), "base64").toString("utf8");
    const tampered = Buffer.from(xml.replace("ada@example.com", "eve@example.com")).toString("base64");
    expect(await refusal(verifyResponse(settings(), sp, tampered, undefined))).toMatch(/signature/i);
  });

  it("refuses another audience, an expired assertion and one not yet valid", async () => {
    const wrongAudience = await idp.response({ sp: target, email: "a@example.com", audience: "https://other.example" });
    expect(await refusal(verifyResponse(settings(), sp, wrongAudience, undefined))).toMatch(/audience/i);
    const past = new Date(Date.now() - 20 * 60_000);
    const expired = await idp.response({ sp: target, email: "a@example.com", issuedAt: past });
    expect(await refusal(verifyResponse(settings(), sp, expired, undefined))).toMatch(/expired/i);
    const future = await idp.response({
      sp: target,
      email: "a@example.com",
      notBefore: new Date(Date.now() + 600_000),
    });
    expect(await refusal(verifyResponse(settings(), sp, future, undefined))).toMatch(/not yet valid/i);
  });

  it("takes a minute of clock skew, not more", async () => {
    const justExpired = await idp.response({
      sp: target,
      email: "a@example.com",
      issuedAt: new Date(Date.now() - 6 * 60_000),
      notOnOrAfter: new Date(Date.now() - 30_000),
    });
    expect(await refusal(verifyResponse(settings(), sp, justExpired, undefined))).toBe("accepted");
  });

  it("refuses another Destination, another Recipient and another issuer", async () => {
    const destination = await idp.response({
      sp: target,
      email: "a@example.com",
      destination: "https://x.example/acs",
    });
    expect(await refusal(verifyResponse(settings(), sp, destination, undefined))).toMatch(/Destination/);
    const recipient = await idp.response({ sp: target, email: "a@example.com", recipient: "https://x.example/acs" });
    expect(await refusal(verifyResponse(settings(), sp, recipient, undefined))).toMatch(/Recipient/);
    const ok = await idp.response({ sp: target, email: "a@example.com" });
    const other = { ...settings(), idpEntityId: "https://other-idp.example" };
    expect(await refusal(verifyResponse(other, sp, ok, undefined))).toMatch(/issuer/);
  });

  it("refuses what is not a SAML response", async () => {
    expect(await refusal(verifyResponse(settings(), sp, Buffer.from("<x/>").toString("base64"), undefined))).toMatch(
      /refused/,
    );
  });
});

describe("the AuthnRequest and the metadata", () => {
  it("sends the request to the IdP's SSO URL with the RelayState, and the IdP reads its id", async () => {
    const requestId = newRequestId();
    const url = await authorizeUrl(settings(), sp, requestId, "sst_state");
    expect(url.startsWith(`${idp.ssoUrl}?`)).toBe(true);
    expect(new URL(url).searchParams.get("RelayState")).toBe("sst_state");
    expect(await idp.requestIdOf(url, target)).toBe(requestId);
  });

  it("describes the SP: entity id, ACS over HTTP-POST, NameID emailAddress, signed assertions", () => {
    const xml = metadataXml(sp);
    expect(xml).toContain(`entityID="${sp.entityId}"`);
    expect(xml).toContain(`Location="${sp.acsUrl}"`);
    expect(xml).toContain("urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST");
    expect(xml).toContain("urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress");
    expect(xml).toContain('WantAssertionsSigned="true"');
  });
});
