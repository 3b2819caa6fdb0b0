/**
 * What the event consumers read for every event of an organization (its enabled online rules, its
 * queues with an auto-add rule), kept per organization so that a burst of run.completed reads the
 * store once. Every change of a rule moves a counter shared by all evaluation processes on the bus
 * (RULES_GENERATION, `@kiln/kit/bus/generation`) before it is answered, and an entry serves only
 * while the counter has not moved since it was read: a run that completes after a rule's change
 * was answered meets the new rule, whichever process takes its event. When the bus does not
 * answer, nothing cached is trusted (the store is read); an entry is read again after a minute
 * whatever the counter says.
 */
import { GENERATIONS } from "@kiln/contracts/bus-names";
import type { Bus, StreamSpec } from "@kiln/kit/bus";
import { createGeneration, type Generation, generationStream } from "@kiln/kit/bus/generation";
import type { Logger } from "@kiln/kit/logger";
import { LRUCache } from "lru-cache";

export const RULES_GENERATION: StreamSpec = generationStream(GENERATIONS.evaluationRules);

const MAX_AGE_MS = 60_000;

export interface OrgCache<T> {
  get(organizationId: string): Promise<T>;
  /** The organization's data changed: read it afresh here, and move the counter for the others. */
  changed(organizationId: string): Promise<void>;
}

/** The counter of rule changes, its stream ensured. */
export async function rulesGeneration(bus: Bus, logger: Logger): Promise<Generation> {
  await bus.ensureStream(RULES_GENERATION);
  return createGeneration(bus, logger, RULES_GENERATION);
}

export function createOrgCache<T extends object>(
  load: (organizationId: string) => Promise<T>,
  generation: Generation,
  logger: Logger,
): OrgCache<T> {
  const cache = new LRUCache<string, { generation: number; value: Promise<T> }>({ max: 1_000, ttl: MAX_AGE_MS });
  return {
    async get(organizationId) {
      const current = await generation.current().catch(() => undefined);
      if (current === undefined) return load(organizationId);
      const entry = cache.get(organizationId);
      if (entry && entry.generation === current) return entry.value;
      const value = load(organizationId);
      // A failed read is not kept: the next event reads again.
      value.catch(() => cache.delete(organizationId));
      cache.set(organizationId, { generation: current, value });
      return value;
    },
    async changed(organizationId) {
      cache.delete(organizationId);
      // A bus that refuses: the counter is moved once it is back (generation.ts); the change stands.
      await generation.bump().catch((err: unknown) => logger.warn({ err }, "rule change not announced yet"));
    },
  };
}
