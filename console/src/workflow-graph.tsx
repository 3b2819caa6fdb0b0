import type { Workflow, WorkflowValidation } from "@kiln/sdk";

type Step = Workflow["steps"][number];

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

/** The workflow as a graph: one box per step in order, arrows for `next` and branches. */
export function WorkflowGraph({ workflow, issues }: { workflow: Workflow; issues: Map<string, string[]> }) {
  const steps = workflow.steps ?? [];
  const width = 220;
  const height = 56;
  const gap = 40;
  const index = new Map(steps.map((s, i) => [s.id, i]));
  const edges = steps.flatMap((s: Step, i) => {
    const next = s.next;
    if (typeof next === "string") return [{ from: i, to: index.get(next), label: "" }];
    if (Array.isArray(next)) return next.map((b, k) => ({ from: i, to: index.get(b.to), label: `branch ${k + 1}` }));
    return [];
  });
  const total = steps.length * (height + gap);
  return (
    <figure className="graph">
      <svg
        viewBox={`0 0 ${width + 160} ${Math.max(total, height)}`}
        width="100%"
        role="img"
        aria-label={`Workflow of ${steps.length} steps starting at ${workflow.entry}`}
      >
        <defs>
          <marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="6" markerHeight="6" orient="auto">
            <path d="M0,0 L10,5 L0,10 z" fill="#232136" />
          </marker>
        </defs>
        {edges.map((e, k) => {
          if (e.to === undefined) return null;
          const y1 = e.from * (height + gap) + height;
          const y2 = e.to * (height + gap);
          const forward = e.to > e.from;
          const x = width / 2 + (forward ? 0 : width / 2 + 20);
          const path = forward
            ? `M${width / 2},${y1} L${width / 2},${y2}`
            : `M${width},${y1 - height / 2} C${x + 60},${y1} ${x + 60},${y2} ${width},${y2 + height / 2}`;
          return (
            // biome-ignore lint/suspicious/noArrayIndexKey: edges of one workflow, in order
            <g key={k}>
              <path d={path} stroke="#232136" fill="none" markerEnd="url(#arrow)" />
              {e.label && (
                <text x={width / 2 + 8} y={(y1 + y2) / 2} fontSize="11">
                  {e.label}
                </text>
              )}
            </g>
          );
        })}
        {steps.map((s, i) => {
          const bad = issues.has(s.id);
          return (
            <g key={s.id} transform={`translate(0, ${i * (height + gap)})`}>
              <rect
                width={width}
                height={height}
                rx="6"
                fill={bad ? "#fdecea" : "#fff"}
                stroke={bad ? "#b3261e" : "#232136"}
              />
              <text x="10" y="22" fontSize="14" fontWeight="600">
                {s.id}
                {s.id === workflow.entry ? " (entry)" : ""}
              </text>
              <text x="10" y="42" fontSize="12">
                {s.type}
                {bad ? " · has issues" : ""}
              </text>
            </g>
          );
        })}
      </svg>
      <figcaption>Steps in order; arrows follow next and branches.</figcaption>
    </figure>
  );
}
