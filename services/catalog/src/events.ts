/**
 * The catalog's events on the bus (docs/events/catalog.*.schema.json): a version created, a
 * publish, a label moved. Each is written to the catalog's outbox beside the change and published
 * from there, so an event the bus refused is published later (kit/bus/event-outbox.ts).
 */
import { type EventEnvelope, type EventOutbox, eventStream, outboxEventOf } from "@kiln/kit/bus/outbox";
import type { LabelKind, LabelMoveDoc, PromptVersionDoc } from "./store/catalog-store.js";

export const CATALOG_STREAM = eventStream("CATALOG", ["catalog.>"]);

export type CatalogEventType =
  | "prompt.version.created"
  | "prompt.published"
  | "skill.published"
  | "agent.published"
  | "label.moved";

export const catalogSubject = (type: CatalogEventType) => `catalog.${type}`;

/** Every catalog event: `{id, type, organizationId, occurredAt, data}`. */
export type CatalogEvent<D = Record<string, unknown>> = EventEnvelope<CatalogEventType, D>;

/** What the catalog's use cases emit through. */
export interface CatalogEvents {
  versionCreated(version: PromptVersionDoc): Promise<void>;
  /** A label move; a publish (action "published") is also `<kind>.published`. */
  labelMoved(move: LabelMoveDoc): Promise<void>;
}

const parentField: Record<LabelKind, string> = { prompt: "promptId", skill: "skillId", agent: "agentId" };

const event = (type: CatalogEventType, sourceId: string, organizationId: string, at: Date, data: object) =>
  outboxEventOf(catalogSubject(type), { type, sourceId, organizationId, at, data });

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
        [parentField[m.kind]]: m.parentId,
        label: m.label,
        action: m.action,
        versionId: m.versionId,
        version: m.version,
        previousVersionId: m.previousVersionId,
        by: m.by || null,
      });
      if (m.action !== "published") return outbox.add([moved]);
      const published = event(`${m.kind}.published`, m._id, m.organizationId, m.at, {
        [parentField[m.kind]]: m.parentId,
        versionId: m.versionId,
        version: m.version,
        previousVersionId: m.previousVersionId,
        by: m.by || null,
      });
      await outbox.add([published, moved]);
    },
  };
}
