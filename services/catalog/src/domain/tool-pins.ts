/**
 * Tool attachments: a prompt version or skill version pins tools to versions. A step may call its
 * prompt version's tools plus the skill version's tools, so one tool key must mean one version.
 */
import { fieldPath, type Issues } from "./issues.js";

/** A type, not an interface, so a pin is JSON wherever JSON is wanted (a version diff's document). */
export type ToolPin = {
  toolId: string;
  toolVersionId: string;
  toolKey: string;
};

/** The pin alone, whatever else the object carrying it holds. */
export const toolPinOf = (p: ToolPin): ToolPin => ({
  toolId: p.toolId,
  toolVersionId: p.toolVersionId,
  toolKey: p.toolKey,
});

/** A list names each tool key at most once (the models see tools by key). */
export function checkDistinctToolKeys(issues: Issues, field: string, pins: readonly ToolPin[]): void {
  pins.forEach((pin, i) => {
    const first = pins.findIndex((p) => p.toolKey === pin.toolKey);
    if (first < i)
      issues.add(fieldPath(field, i), `tool key "${pin.toolKey}" is already listed at ${fieldPath(field, first)}`);
  });
}

/** The first pin of `a` whose key `b` pins to another version, with that other pin. */
export function conflictingPin(
  a: readonly ToolPin[],
  b: readonly ToolPin[],
): { pin: ToolPin; other: ToolPin } | undefined {
  for (const pin of a) {
    const other = b.find((p) => p.toolKey === pin.toolKey && p.toolVersionId !== pin.toolVersionId);
    if (other) return { pin, other };
  }
  return undefined;
}
