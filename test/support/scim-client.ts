/**
 * A SCIM client over real HTTP, as an identity provider calls /scim/v2: the bearer token, the
 * application/scim+json media type, and the answers parsed whatever their status.
 */
import { expect } from "vitest";

// biome-ignore lint/suspicious/noExplicitAny: SCIM answers are read loosely and asserted on.
type Loose = any;

export interface ScimResponse {
  status: number;
  headers: Headers;
  body: Loose;
}

export function scimClient(base: string, token: string) {
  async function send(method: string, path: string, body?: unknown, credential = token): Promise<ScimResponse> {
    return sendText(method, path, body === undefined ? undefined : JSON.stringify(body), credential);
  }
  /** `text` as the body, as it is (a malformed one, say). */
  async function sendText(method: string, path: string, text: string | undefined, credential = token) {
    const res = await fetch(`${base}/scim/v2${path}`, {
      method,
      headers: {
        authorization: `Bearer ${credential}`,
        accept: "application/scim+json",
        ...(text !== undefined && { "content-type": "application/scim+json; charset=utf-8" }),
      },
      body: text,
    });
    const answer = await res.text();
    return { status: res.status, headers: res.headers, body: answer ? JSON.parse(answer) : null } as ScimResponse;
  }
  return {
    send,
    sendText,
    get: (path: string, credential?: string) => send("GET", path, undefined, credential),
    post: (path: string, body: unknown) => send("POST", path, body),
    put: (path: string, body: unknown) => send("PUT", path, body),
    patch: (path: string, body: unknown) => send("PATCH", path, body),
    delete: (path: string) => send("DELETE", path),
  };
}

export type ScimClient = ReturnType<typeof scimClient>;

export const PATCH_OP = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
export const USER_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:User";
export const GROUP_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Group";

/** A SCIM error body of `status` (and `scimType`), served as application/scim+json. */
export function expectScimError(res: ScimResponse, status: number, scimType?: string): string {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.headers.get("content-type")).toMatch(/^application\/scim\+json/);
  expect(res.body).toMatchObject({
    schemas: ["urn:ietf:params:scim:api:messages:2.0:Error"],
    status: String(status),
    detail: expect.any(String),
  });
  if (scimType) expect(res.body.scimType).toBe(scimType);
  return res.body.detail;
}

/** Okta's "create user" body (Okta's SCIM 2.0 guide): name, emails with primary and type, active. */
export const oktaUser = (email: string, externalId: string) => ({
  schemas: [USER_SCHEMA],
  userName: email,
  name: { givenName: "Ada", familyName: "Lovelace" },
  emails: [{ primary: true, value: email, type: "work" }],
  displayName: "Ada Lovelace",
  locale: "en-US",
  externalId,
  groups: [],
  password: "not-stored-1!",
  active: true,
});

/** Microsoft Entra ID's "create user" body (its SCIM provisioning reference). */
export const entraUser = (email: string, externalId: string) => ({
  schemas: [USER_SCHEMA, "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"],
  externalId,
  userName: email,
  active: true,
  emails: [{ primary: true, type: "work", value: email }],
  meta: { resourceType: "User" },
  name: { formatted: "Grace Hopper", familyName: "Hopper", givenName: "Grace" },
  roles: [],
});
