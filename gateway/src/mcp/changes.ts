import { CATALOG_EVENTS } from "@kiln/contracts/bus-names";
import type { Bus, Subscription } from "@kiln/kit/bus";
import type { Logger } from "@kiln/kit/logger";

/** The lists an MCP client can be told have changed. */
export type ChangedList = "prompts" | "tools";

/** The catalog's events (services/catalog/src/events.ts), as far as the lists need them. */
interface CatalogEventLike {
  type?: unknown;
  organizationId?: unknown;
  data?: { kind?: unknown; action?: unknown };
}

/**
 * Which lists a catalog event changes: a publish changes the prompts or the tools; a label move
 * changes the prompts offered as `name@label` (a move of a skill's or agent's label is passed on as
 * a tools change, a harmless extra hint); a move that is a publish is covered by its publish event.
 */
export function listsChangedBy(event: CatalogEventLike): ChangedList[] {
  switch (event.type) {
    case "prompt.published":
      return ["prompts"];
    case "skill.published":
    case "agent.published":
      return ["tools"];
    case "label.moved":
      if (event.data?.action === "published") return [];
      return event.data?.kind === "prompt" ? ["prompts"] : ["tools"];
    default:
      return [];
  }
}

/**
 * Listens to the catalog's events on the bus (every gateway process hears each one: Bus.listen)
 * and hands each change to `notify` with the organization it happened in.
 */
export function listenToCatalogChanges(
  bus: Bus,
  logger: Logger,
  notify: (organizationId: string, lists: ChangedList[]) => void,
): Subscription {
  return bus.listen(CATALOG_EVENTS.subjects[0], (subject, data) => {
    try {
      const event = JSON.parse(new TextDecoder().decode(data)) as CatalogEventLike;
      const lists = listsChangedBy(event);
      if (lists.length > 0 && typeof event.organizationId === "string") notify(event.organizationId, lists);
    } catch (err) {
      logger.warn({ err, subject }, "a catalog event the MCP endpoint could not read");
    }
  });
}
