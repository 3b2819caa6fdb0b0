/**
 * The catalog's events on the bus (docs/events/catalog.*.schema.json): a version created, a
 * publish, a label moved. Each is written to the catalog's outbox beside the change and published
 * from there, so an event the bus refused is published later (kit/bus/event-outbox.ts).
 */
import { CATALOG_EVENTS, catalogSubject } from "@kiln/contracts/bus-names";
import type {
  CatalogEventType,
  LabelMovedData,
  ParentId,
  PromptVersionCreatedData,
  PublishedData,
} from "@kiln/contracts/events";
import { type EventOutbox, eventStream, outboxEventOf } from "@kiln/kit/bus/outbox";
import type { LabelKind, LabelMoveDoc, PromptVersionDoc } from "./store/catalog-store.js";

export const CATALOG_STREAM = eventStream(CATALOG_EVENTS.stream, [...CATALOG_EVENTS.subjects]);

/** What the catalog's use cases emit through. */
export interface CatalogEvents {
  versionCreated(version: PromptVersionDoc): Promise<void>;
  /** A label move; a publish (action "published") is also `<kind>.published`. */
  labelMoved(move: LabelMoveDoc): Promise<void>;
}

/** The resource a label belongs to, by the field its kind names. */
const parentOf = (kind: LabelKind, id: string): ParentId =>
  kind === "prompt" ? { promptId: id } : kind === "skill" ? { skillId: id } : { agentId: id };

const event = (
  type: CatalogEventType,
  sourceId: string,
  organizationId: string,
  at: Date,
  data: PromptVersionCreatedData | PublishedData | LabelMovedData,
) => outboxEventOf(catalogSubject(type), { type, sourceId, organizationId, at, data });

export function createCatalogEvents(outbox: EventOutbox): CatalogEvents {
  return {
    async versionCreated(v) {
      await outbox.add([
        event("prompt.version.created", v._id, v.organizationId, v.createdAt, {
          promptId: v.promptId,
          versionId: v._id,
          version: v.version,
          status: v.status,
          model: v.model,
        }),
      ]);
    },
    async labelMoved(m) {
      const moved = event("label.moved", m._id, m.organizationId, m.at, {
        kind: m.kind,
        ...parentOf(m.kind, m.parentId),
        label: m.label,
        action: m.action,
        versionId: m.versionId,
        version: m.version,
        previousVersionId: m.previousVersionId,
        by: m.by || null,
      });
      // A publish always names the version it published.
      if (m.action !== "published" || m.versionId === null || m.version === null) return outbox.add([moved]);
      const published = event(`${m.kind}.published`, m._id, m.organizationId, m.at, {
        ...parentOf(m.kind, m.parentId),
        versionId: m.versionId,
        version: m.version,
        previousVersionId: m.previousVersionId,
        by: m.by || null,
      });
      await outbox.add([published, moved]);
    },
  };
}
