import { notFound, unauthenticated } from "@kiln/kit/errors";
import { newId } from "@kiln/kit/ids";
import { findPage, type Page } from "@kiln/kit/pagination";
import { secretMatches } from "../domain/api-keys.js";
import { Issues } from "../domain/rules.js";
import { generateScimToken, parseScimToken } from "../domain/scim-tokens.js";
import type { ScimTokenDoc } from "../store/scim-store.js";
import type { Access } from "./access.js";

/** SCIM tokens: made, listed and revoked by owners and admins; checked on every SCIM call. */
export function scimTokenUseCases(access: Access) {
  const { c, now, managedOrganization } = access;
  const manage = (userId: string, organizationId: string) =>
    managedOrganization(userId, organizationId, "manage SCIM tokens");

  return {
    async createScimToken(userId: string, input: { organizationId: string; name: string }) {
      const issues = new Issues();
      const name = issues.text("name", input.name);
      issues.throwIfAny();
      await manage(userId, input.organizationId);
      const id = newId("sct");
      const { token, secretHash } = generateScimToken(id);
      const doc: ScimTokenDoc = {
        _id: id,
        organizationId: input.organizationId,
        name,
        secretHash,
        createdByUserId: userId,
        createdAt: now(),
        revokedAt: null,
      };
      await c.scimTokens.insertOne(doc);
      return { scimToken: doc, token };
    },

    async listScimTokens(userId: string, input: { organizationId: string; limit: number; cursor: string }) {
      await manage(userId, input.organizationId);
      return findPage(c.scimTokens, { organizationId: input.organizationId }, input) as Promise<Page<ScimTokenDoc>>;
    },

    /** Revoked at once: every SCIM call checks its token here. Revoking again answers it unchanged. */
    async revokeScimToken(userId: string, input: { organizationId: string; id: string }) {
      await manage(userId, input.organizationId);
      const doc = await c.scimTokens.findOne({ _id: input.id, organizationId: input.organizationId });
      if (!doc) throw notFound("SCIM token");
      return (
        (await c.scimTokens.findOneAndUpdate(
          { _id: doc._id, revokedAt: null },
          { $set: { revokedAt: now() } },
          { returnDocument: "after" },
        )) ?? doc
      );
    },

    /** The organization a presented SCIM token acts in; `unauthenticated` for any other token. */
    async scimOrganizationOf(token: string): Promise<string> {
      const parsed = parseScimToken(token);
      const doc = parsed ? await c.scimTokens.findOne({ _id: parsed.tokenId }) : null;
      if (!parsed || !doc || doc.revokedAt || !secretMatches(parsed.secret, doc.secretHash)) {
        throw unauthenticated("invalid SCIM token");
      }
      if (!(await c.organizations.findOne({ _id: doc.organizationId }))) throw unauthenticated("invalid SCIM token");
      return doc.organizationId;
    },
  };
}
