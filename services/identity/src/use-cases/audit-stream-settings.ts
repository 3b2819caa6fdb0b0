import { failedPrecondition, invalidArgument, notFound } from "@kiln/kit/errors";
import type { HostPattern } from "@kiln/kit/outbound/host-patterns";
import type { SecretBox } from "@kiln/kit/secret-box";
import { type Collection, isDuplicateKeyError } from "@kiln/kit/store";
import { newSecret } from "@kiln/webhooks-lib/signing";
import { urlIssues } from "@kiln/webhooks-lib/url-policy";
import { type AuditStreamDoc, sealContextOf, WEBHOOK_DESTINATION } from "../audit/audit-stream-store.js";
import { cursorKey, EPOCH, type ExportCursorDoc } from "../audit/export-cursors.js";
import type { Access } from "./access.js";

export interface AuditStreamSettingsDeps {
  streams: Collection<AuditStreamDoc>;
  cursors: Collection<ExportCursorDoc>;
  /** Seals the signing secrets (KILN_SECRET_KEY); none: a stream cannot be set. */
  secrets?: SecretBox;
  /** WEBHOOK_PRIVATE_HOSTS: the webhooks' outbound address policy, checked when the URL is set. */
  privateHosts: readonly HostPattern[];
  /** A stream was set, moved or given a new secret: the stream sends now rather than at its next pass. */
  changed?: () => void;
}

/** A stream as its owners read it: where it goes and how far the receiver acknowledged the log. */
export interface AuditStreamState {
  stream: AuditStreamDoc;
  cursor: ExportCursorDoc | null;
}

/**
 * An organization's own audit webhook (docs/governance.md "Streaming"): owners and admins set its
 * URL (the webhooks' address policy), read it with its delivery state, remove it and rotate its
 * signing secret. The secret is answered when it is made (the first set, a rotation) and never
 * again. Every read and write is keyed by the organization.
 */
export function auditStreamSettingsUseCases(access: Access, deps: AuditStreamSettingsDeps) {
  const { now, managedOrganization } = access;
  const { streams, cursors } = deps;
  const changed = deps.changed ?? (() => {});
  const manage = (userId: string, organizationId: string) =>
    managedOrganization(userId, organizationId, "manage the audit log's stream");
  const keyOf = (organizationId: string) => cursorKey(WEBHOOK_DESTINATION, organizationId);

  function secretBox(): SecretBox {
    if (!deps.secrets)
      throw failedPrecondition(
        "this deployment has no KILN_SECRET_KEY: an audit stream's signing secret cannot be kept",
      );
    return deps.secrets;
  }

  async function stateOf(stream: AuditStreamDoc): Promise<AuditStreamState> {
    return { stream, cursor: await cursors.findOne({ _id: keyOf(stream.organizationId) }) };
  }

  async function existing(userId: string, organizationId: string): Promise<AuditStreamDoc> {
    await manage(userId, organizationId);
    const stream = await streams.findOne({ _id: organizationId });
    if (!stream) throw notFound("audit stream");
    return stream;
  }

  /** A new stream: a fresh secret, and the cursor of any removed before gone, so it starts at the log's beginning. */
  async function create(userId: string, organizationId: string, url: string, box: SecretBox) {
    const at = now();
    const secret = newSecret();
    const stream: AuditStreamDoc = {
      _id: organizationId,
      organizationId,
      url,
      secret: box.seal(secret, sealContextOf(organizationId)),
      createdAt: at,
      updatedAt: at,
      updatedByUserId: userId,
    };
    await cursors.deleteOne({ _id: keyOf(organizationId) });
    await streams.insertOne(stream);
    return { ...(await stateOf(stream)), secret };
  }

  /** Another URL for a stream: the cursor stays (nothing is sent twice), a backoff for the old URL ends. */
  async function move(userId: string, before: AuditStreamDoc, url: string): Promise<AuditStreamState> {
    const stream =
      (await streams.findOneAndUpdate(
        { _id: before._id },
        { $set: { url, updatedAt: now(), updatedByUserId: userId } },
        { returnDocument: "after" },
      )) ?? before;
    if (before.url !== url)
      await cursors.updateOne({ _id: keyOf(before._id) }, { $set: { failures: 0, retryAt: EPOCH } });
    return stateOf(stream);
  }

  return {
    /** Sets the URL; the secret is answered only when this made the stream. */
    async putAuditStream(
      userId: string,
      organizationId: string,
      url: string,
    ): Promise<AuditStreamState & { secret?: string }> {
      const issues = urlIssues(url, deps.privateHosts);
      if (issues.length > 0) throw invalidArgument("invalid audit stream", issues);
      await manage(userId, organizationId);
      const box = secretBox();
      const before = await streams.findOne({ _id: organizationId });
      let result: AuditStreamState & { secret?: string };
      try {
        result = before ? await move(userId, before, url) : await create(userId, organizationId, url, box);
      } catch (e) {
        // Another set made it first: this one moves it.
        const made = isDuplicateKeyError(e) ? await streams.findOne({ _id: organizationId }) : null;
        if (!made) throw e;
        result = await move(userId, made, url);
      }
      changed();
      return result;
    },

    async getAuditStream(userId: string, organizationId: string): Promise<AuditStreamState> {
      return stateOf(await existing(userId, organizationId));
    },

    /** Removes the stream and its cursor: nothing more is sent; answers it as it was. */
    async deleteAuditStream(userId: string, organizationId: string): Promise<AuditStreamState> {
      const state = await stateOf(await existing(userId, organizationId));
      if ((await streams.deleteOne({ _id: organizationId })).deletedCount === 0) throw notFound("audit stream");
      await cursors.deleteOne({ _id: keyOf(organizationId) });
      return state;
    },

    /** A new secret signs every request from now on (the old one no longer does); answered once. */
    async rotateAuditStreamSecret(userId: string, organizationId: string) {
      const before = await existing(userId, organizationId);
      const box = secretBox();
      const secret = newSecret();
      const stream = await streams.findOneAndUpdate(
        { _id: before._id },
        {
          $set: {
            secret: box.seal(secret, sealContextOf(organizationId)),
            updatedAt: now(),
            updatedByUserId: userId,
          },
        },
        { returnDocument: "after" },
      );
      if (!stream) throw notFound("audit stream");
      changed();
      return { ...(await stateOf(stream)), secret };
    },
  };
}

/** Seals again, under the current key, every stream secret sealed under a previous one; resolves to how many. */
export async function resealAuditStreamSecrets(streams: Collection<AuditStreamDoc>, box: SecretBox): Promise<number> {
  let resealed = 0;
  for (const s of await streams.find({}, { limit: 1_000_000 })) {
    if (box.isCurrent(s.secret)) continue;
    const context = sealContextOf(s.organizationId);
    await streams.updateOne(
      { _id: s._id, secret: s.secret },
      { $set: { secret: box.seal(box.open(s.secret, context), context) } },
    );
    resealed++;
  }
  return resealed;
}
