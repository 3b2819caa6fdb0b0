import type { Access } from "./access.js";
import type { HttpAllowlist } from "./domain/tool-config.js";
import type { CatalogEvents } from "./events.js";
import type { LiveVersionCache } from "./live-version-cache.js";
import type { CatalogCollections } from "./store/catalog-store.js";

/** What the catalog's use cases run on. */
export interface CatalogDeps {
  collections: CatalogCollections;
  access: Access;
  httpAllowlist: HttpAllowlist;
  /** Live versions for runs; publishing and renaming evict from it. */
  live: LiveVersionCache;
  /** Version created, published, label moved: to the outbox, then the bus. */
  events: CatalogEvents;
  now: () => Date;
}
