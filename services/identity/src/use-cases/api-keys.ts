import { DomainError, notFound, unauthenticated } from "@kiln/kit/errors";
import { newId } from "@kiln/kit/ids";
import { findPage, type Page } from "@kiln/kit/pagination";
import type { Principal } from "@kiln/kit/principal";
import { generateApiKey, parseApiKey, secretMatches } from "../domain/api-keys.js";
import { checkScopes, checkTokensPerMinute, Issues } from "../domain/rules.js";
import type { ApiKeyDoc } from "../store/identity-store.js";
import type { Access } from "./access.js";

/** API keys: creating, listing, changing and revoking them (owners and admins), and checking one. */
export function apiKeyUseCases(access: Access) {
  const { c, now, activeKey, manageableKeyOrg } = access;

  return {
    async createApiKey(
      userId: string,
      input: { organizationId: string; name: string; scopes: string[]; tokensPerMinute?: number },
    ) {
      const issues = new Issues();
      const name = issues.text("name", input.name);
      const scopes = checkScopes(issues, input.scopes);
      const tokensPerMinute = checkTokensPerMinute(issues, input.tokensPerMinute);
      issues.throwIfAny();
      await manageableKeyOrg(userId, input.organizationId);
      const id = newId("key");
      const { key, secretHash } = generateApiKey(id);
      const doc: ApiKeyDoc = {
        _id: id,
        organizationId: input.organizationId,
        name,
        scopes,
        secretHash,
        createdByUserId: userId,
        createdAt: now(),
        revokedAt: null,
        ...(tokensPerMinute !== undefined && { tokensPerMinute }),
      };
      await c.apiKeys.insertOne(doc);
      return { apiKey: doc, key };
    },

    async listApiKeys(userId: string, input: { organizationId: string; limit: number; cursor: string }) {
      await manageableKeyOrg(userId, input.organizationId);
      return findPage(c.apiKeys, { organizationId: input.organizationId }, input) as Promise<Page<ApiKeyDoc>>;
    },

    /**
     * PATCH /api/api-keys/:id: the key's token-per-minute limit (`null`: none). Checked before the
     * key is looked up: bad input changes nothing and says nothing about the key.
     */
    async updateApiKey(userId: string, keyId: string, change: { tokensPerMinute?: number | null }) {
      const issues = new Issues();
      const limit = change.tokensPerMinute === null ? undefined : change.tokensPerMinute;
      checkTokensPerMinute(issues, limit);
      issues.throwIfAny();
      const key = await manageableKey(userId, keyId);
      if (change.tokensPerMinute === undefined) return key;
      const update =
        change.tokensPerMinute === null
          ? { $unset: { tokensPerMinute: true as const } }
          : { $set: { tokensPerMinute: change.tokensPerMinute } };
      // Scoped by the key's organization, which the caller manages.
      return (
        (await c.apiKeys.findOneAndUpdate({ _id: keyId, organizationId: key.organizationId }, update, {
          returnDocument: "after",
        })) ?? key
      );
    },

    async revokeApiKey(userId: string, keyId: string) {
      const key = await manageableKey(userId, keyId);
      return (
        (await c.apiKeys.findOneAndUpdate(
          { _id: keyId, revokedAt: null },
          { $set: { revokedAt: now() } },
          { returnDocument: "after" },
        )) ?? key
      );
    },

    async verifyApiKey(key: string): Promise<Principal> {
      const parsed = parseApiKey(key);
      if (!parsed) throw unauthenticated("invalid API key");
      const doc = await activeKey(parsed.keyId);
      if (!secretMatches(parsed.secret, doc.secretHash)) throw unauthenticated("invalid API key");
      return {
        type: "api_key",
        id: doc._id,
        organizationId: doc.organizationId,
        scopes: doc.scopes,
        ...(doc.tokensPerMinute != null && { tokensPerMinute: doc.tokensPerMinute }),
      };
    },
  };

  /** A key of an organization the caller manages; one it cannot manage does not exist for them. */
  async function manageableKey(userId: string, keyId: string): Promise<ApiKeyDoc> {
    const key = await c.apiKeys.findOne({ _id: keyId });
    if (!key) throw notFound("API key");
    try {
      await manageableKeyOrg(userId, key.organizationId);
    } catch (e) {
      if (e instanceof DomainError && e.kind === "not_found") throw notFound("API key");
      throw e;
    }
    return key;
  }
}
