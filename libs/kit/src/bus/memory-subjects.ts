/** NATS subject rules, as the in-process bus applies them. */
import type { MemoryConsumer, MemoryStream } from "./memory-bus-state.js";
import type { ResolvedConsumerSpec, ResolvedStreamSpec } from "./resolve-spec.js";

export function filterMatches(c: MemoryConsumer, subject: string): boolean {
  return c.spec.filterSubject === undefined || subjectMatches(c.spec.filterSubject, subject);
}

/** NATS subject matching: `*` is one token, `>` one or more trailing tokens. */
export function subjectMatches(pattern: string, subject: string): boolean {
  const p = pattern.split(".");
  const s = subject.split(".");
  for (let i = 0; i < p.length; i++) {
    if (p[i] === ">") return s.length > i;
    if (i >= s.length || (p[i] !== "*" && p[i] !== s[i])) return false;
  }
  return p.length === s.length;
}

/** True when some subject matches both patterns. */
export function subjectsOverlap(a: string, b: string): boolean {
  const x = a.split(".");
  const y = b.split(".");
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    if (x[i] === ">" || y[i] === ">") return true;
    if (x[i] !== "*" && y[i] !== "*" && x[i] !== y[i]) return false;
  }
  return x.length === y.length;
}

/** A consumer's filter must lie within its stream's subjects, and on a work queue overlap no other. */
export function assertFilterFits(stream: MemoryStream, c: ResolvedConsumerSpec): void {
  const filter = c.filterSubject;
  if (filter && !stream.spec.subjects.some((s) => subjectsOverlap(s, filter))) {
    throw new Error("consumer filter subject is not a valid subset of the interest subjects");
  }
  if (stream.spec.retention === "workqueue") {
    for (const other of stream.consumers.values()) {
      if (other.spec.durable === c.durable) continue;
      const otherFilter = other.spec.filterSubject;
      if (!filter || !otherFilter) throw new Error("multiple non-filtered consumers not allowed on workqueue stream");
      if (subjectsOverlap(filter, otherFilter)) throw new Error("filtered consumer not unique on workqueue stream");
    }
  }
}

/** A stream's window fits its age limit, and its subjects overlap no other stream's. */
export function assertStreamFits(streams: Iterable<MemoryStream>, s: ResolvedStreamSpec): void {
  if (s.maxAgeMs !== undefined && s.duplicateWindowMs > s.maxAgeMs) {
    throw new Error("duplicates window can not be larger then max age");
  }
  for (const other of streams) {
    if (other.spec.name === s.name) continue;
    if (s.subjects.some((a) => other.spec.subjects.some((b) => subjectsOverlap(a, b)))) {
      throw new Error("subjects overlap with an existing stream");
    }
  }
}
