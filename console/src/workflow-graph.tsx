import type { Workflow, WorkflowValidation } from "@kiln/sdk";
import { type Branch, branchLabel } from "./workflow-branches.js";
import { mappingOf, type Step } from "./workflow-model.js";

/** The issues of a validation pinned to the step they are about (`steps[i]…`). */
export function issuesByStep(workflow: Workflow | null, validation: WorkflowValidation | null): Map<string, string[]> {
  const byStep = new Map<string, string[]>();
  if (!workflow || !validation) return byStep;
  for (const issue of [...validation.errors, ...validation.warnings]) {
    const index = /^steps\[(\d+)\]/.exec(issue.path)?.[1];
    const step = index === undefined ? undefined : workflow.steps[Number(index)];
    const key = step?.id ?? "(workflow)";
    byStep.set(key, [...(byStep.get(key) ?? []), `${issue.code}: ${issue.message}`]);
  }
  return byStep;
}

const WIDTH = 220;
const HEIGHT = 56;
const GAP = 40;
/** Room on the left for the data arrows (a step's output read by another step's input). */
const LEFT = 90;
const INK = "#232136";
const DATA = "#5b4b8a";

/** The data arrows: for each input of a step bound to another step's output, from that step to it. */
function dataEdges(steps: Step[], index: Map<string, number>) {
  return steps.flatMap((s, to) =>
    Object.entries(s.input ?? {}).flatMap(([name, value]) => {
      const m = mappingOf(value);
      const from = m.source === "step" ? index.get(m.stepId) : undefined;
      return from === undefined || from === to ? [] : [{ from, to, name }];
    }),
  );
}

/**
 * The workflow as a graph: one box per step in order (what it runs, by name when `names` has it),
 * solid arrows for `next` and branches, dashed arrows on the left for outputs read as inputs.
 */
export function WorkflowGraph({
  workflow,
  issues,
  names = new Map(),
}: {
  workflow: Workflow;
  issues: Map<string, string[]>;
  names?: Map<string, string>;
}) {
  const steps = workflow.steps ?? [];
  const index = new Map(steps.map((s, i) => [s.id, i]));
  const edges = steps.flatMap((s: Step, i) => {
    const next = s.next;
    if (typeof next === "string") return [{ from: i, to: index.get(next), label: "" }];
    if (Array.isArray(next))
      return (next as Branch[]).map((b, k) => ({ from: i, to: index.get(b.to), label: `${k + 1}: ${branchLabel(b)}` }));
    return [];
  });
  const data = dataEdges(steps, index);
  const total = steps.length * (HEIGHT + GAP);
  const mid = LEFT + WIDTH / 2;
  return (
    <figure className="graph">
      <svg
        viewBox={`0 0 ${LEFT + WIDTH + 160} ${Math.max(total, HEIGHT)}`}
        width="100%"
        role="img"
        aria-label={`Workflow of ${steps.length} steps starting at ${workflow.entry}`}
      >
        <defs>
          <marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="6" markerHeight="6" orient="auto">
            <path d="M0,0 L10,5 L0,10 z" fill={INK} />
          </marker>
          <marker id="data-arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="6" markerHeight="6" orient="auto">
            <path d="M0,0 L10,5 L0,10 z" fill={DATA} />
          </marker>
        </defs>
        {data.map((e, k) => {
          const y1 = e.from * (HEIGHT + GAP) + HEIGHT / 2 + 6;
          const y2 = e.to * (HEIGHT + GAP) + HEIGHT / 2 - 6;
          const bend = LEFT - 12 - Math.min(Math.abs(e.to - e.from), 3) * 6;
          return (
            // biome-ignore lint/suspicious/noArrayIndexKey: the data arrows of one workflow, in order
            <g key={k}>
              <path
                d={`M${LEFT},${y1} C${bend},${y1} ${bend},${y2} ${LEFT},${y2}`}
                stroke={DATA}
                strokeDasharray="4 3"
                fill="none"
                markerEnd="url(#data-arrow)"
              />
              <text x={bend - 3} y={(y1 + y2) / 2 + 4} fontSize="10" fill={DATA} textAnchor="end">
                {e.name.length > 11 ? `${e.name.slice(0, 10)}…` : e.name}
              </text>
            </g>
          );
        })}
        {edges.map((e, k) => {
          if (e.to === undefined) return null;
          const y1 = e.from * (HEIGHT + GAP) + HEIGHT;
          const y2 = e.to * (HEIGHT + GAP);
          // To the step below: straight down. Further down, or back up: round the boxes on the right.
          const below = e.to === e.from + 1;
          const reach = LEFT + WIDTH + 30 + Math.min(Math.abs(e.to - e.from), 3) * 15;
          const [from, to] = [y1 - HEIGHT / 2, e.to > e.from ? y2 + HEIGHT / 2 - 8 : y2 + HEIGHT / 2];
          const path = below
            ? `M${mid},${y1} L${mid},${y2}`
            : `M${LEFT + WIDTH},${from} C${reach},${from} ${reach},${to} ${LEFT + WIDTH},${to}`;
          const label = e.label.length > 24 ? `${e.label.slice(0, 23)}…` : e.label;
          return (
            // biome-ignore lint/suspicious/noArrayIndexKey: edges of one workflow, in order
            <g key={k}>
              <path d={path} stroke={INK} fill="none" markerEnd="url(#arrow)" />
              {label && (
                <text
                  x={below ? mid + 8 : LEFT + WIDTH + 4}
                  y={below ? (y1 + y2) / 2 + 4 : from - 4 - (k % 2) * 12}
                  fontSize="11"
                >
                  {label}
                </text>
              )}
            </g>
          );
        })}
        {steps.map((s, i) => {
          const bad = issues.has(s.id);
          return (
            // biome-ignore lint/suspicious/noArrayIndexKey: two steps may share an id while it is typed
            <g key={i} transform={`translate(${LEFT}, ${i * (HEIGHT + GAP)})`}>
              <rect
                width={WIDTH}
                height={HEIGHT}
                rx="6"
                fill={bad ? "#fdecea" : "#fff"}
                stroke={bad ? "#b3261e" : INK}
              />
              <text x="10" y="22" fontSize="14" fontWeight="600">
                {s.id}
                {s.id === workflow.entry ? " (entry)" : ""}
              </text>
              <text x="10" y="42" fontSize="12">
                {s.type}
                {names.get(s.id) ? ` · ${names.get(s.id)}` : ""}
                {bad ? " · has issues" : ""}
              </text>
            </g>
          );
        })}
      </svg>
      <figcaption>
        Steps in order; solid arrows follow next and branches, dashed ones carry outputs to inputs.
      </figcaption>
    </figure>
  );
}
