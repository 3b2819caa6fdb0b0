import { fieldPath } from "./issues.js";
import type { WorkflowStep } from "./workflow-shape.js";

export interface Graph {
  byId: Map<string, WorkflowStep>;
  successors: Map<string, string[]>;
  predecessors: Map<string, string[]>;
  reachable: Set<string>;
}

export function targetsOf(step: WorkflowStep): string[] {
  if (step.next === undefined) return [];
  if (typeof step.next === "string") return [step.next];
  return step.next.map((c) => c.to);
}

export function buildGraph(steps: readonly WorkflowStep[], entry: string | undefined): Graph {
  const byId = new Map<string, WorkflowStep>();
  for (const s of steps) if (!byId.has(s.id)) byId.set(s.id, s);
  const successors = new Map<string, string[]>();
  const predecessors = new Map<string, string[]>([...byId.keys()].map((id) => [id, []]));
  for (const [id, s] of byId) {
    const targets = [...new Set(targetsOf(s).filter((t) => byId.has(t)))];
    successors.set(id, targets);
    for (const t of targets) predecessors.get(t)?.push(id);
  }
  const reachable = new Set<string>();
  if (entry !== undefined && byId.has(entry)) {
    const queue = [entry];
    reachable.add(entry);
    while (queue.length > 0) {
      const id = queue.shift() as string;
      for (const t of successors.get(id) ?? []) {
        if (!reachable.has(t)) {
          reachable.add(t);
          queue.push(t);
        }
      }
    }
  }
  return { byId, successors, predecessors, reachable };
}

/** For each reachable step, the steps on every path from the entry to it (itself included). */
export function dominators(graph: Graph, entry: string): Map<string, Set<string>> {
  const nodes = [...graph.reachable];
  const dom = new Map<string, Set<string>>();
  for (const n of nodes) dom.set(n, n === entry ? new Set([entry]) : new Set(nodes));
  let changed = true;
  while (changed) {
    changed = false;
    for (const n of nodes) {
      if (n === entry) continue;
      const preds = (graph.predecessors.get(n) ?? []).filter((p) => graph.reachable.has(p));
      let meet: Set<string> | undefined;
      for (const p of preds) {
        const d = dom.get(p) as Set<string>;
        meet = meet ? new Set([...meet].filter((x) => d.has(x))) : new Set(d);
      }
      const next = new Set(meet ?? []);
      next.add(n);
      const current = dom.get(n) as Set<string>;
      if (next.size !== current.size || [...next].some((x) => !current.has(x))) {
        dom.set(n, next);
        changed = true;
      }
    }
  }
  return dom;
}

/** Steps from which a path of at least one transition leads to `target`. */
export function ancestors(graph: Graph, target: string): Set<string> {
  const seen = new Set<string>();
  const queue = [...(graph.predecessors.get(target) ?? [])];
  while (queue.length > 0) {
    const id = queue.shift() as string;
    if (seen.has(id)) continue;
    seen.add(id);
    queue.push(...(graph.predecessors.get(id) ?? []));
  }
  return seen;
}

/** The transitions that close a cycle (back edges of a depth-first walk over every step). */
export function backEdges(graph: Graph, order: readonly string[]): { from: string; to: string }[] {
  const state = new Map<string, "open" | "done">();
  const found: { from: string; to: string }[] = [];
  const visit = (id: string) => {
    state.set(id, "open");
    for (const t of graph.successors.get(id) ?? []) {
      const s = state.get(t);
      if (s === "open") found.push({ from: id, to: t });
      else if (s === undefined) visit(t);
    }
    state.set(id, "done");
  };
  for (const id of order) if (!state.has(id)) visit(id);
  return found;
}

export function transitionPath(step: WorkflowStep, to: string): string {
  const at = fieldPath(fieldPath("steps", step.index), "next");
  if (typeof step.next === "string") return at;
  const k = step.next?.findIndex((c) => c.to === to) ?? -1;
  return k >= 0 ? fieldPath(fieldPath(at, k), "to") : at;
}
