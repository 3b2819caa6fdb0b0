import type { AnnotationQueueClaim } from "@kiln/sdk";
import { exactCost, formatCost, formatLatency, formatTokens } from "./run-format.js";
import { MessageList } from "./run-messages.js";
import type { Run } from "./run-names.js";

type Content = NonNullable<AnnotationQueueClaim["content"]>;
type Trace = NonNullable<Content["trace"]>;

const json = (v: unknown) => (typeof v === "string" ? v : JSON.stringify(v, null, 2));

/** What the run answered, as a reviewer reads it: its JSON when it has one, else its text. */
export function outputOf(run: Run): string {
  if (!run.output) return run.error?.message ?? "";
  return run.output.json !== undefined ? json(run.output.json) : run.output.text;
}

function Messages({ messages, run }: { messages: Content["messages"]; run: Run }) {
  if (run.kind === "agent") return <p>Each step's messages are on the step's run.</p>;
  if (messages.length === 0) return <p>The prompt version of this run cannot be read.</p>;
  return <MessageList messages={messages} />;
}

function RunContent({ run, messages }: { run: Run; messages: Content["messages"] }) {
  return (
    <>
      <dl className="summary">
        <dt>Run</dt>
        <dd>
          <code>{run.id}</code> ({run.kind}, {run.status})
        </dd>
        <dt>Model</dt>
        <dd>{run.model ?? "several (see the steps)"}</dd>
        <dt>Tokens</dt>
        <dd>{formatTokens(run.usage)}</dd>
        <dt>Cost</dt>
        <dd title={exactCost(run.estimatedCostUsd)}>{formatCost(run.estimatedCostUsd)}</dd>
        <dt>Latency</dt>
        <dd>{formatLatency(run.latencyMs)}</dd>
      </dl>
      <h3>Input</h3>
      <pre className="output">{json(run.input)}</pre>
      <h3>Messages</h3>
      <Messages messages={messages} run={run} />
      <h3>Output</h3>
      <pre className={run.status === "failed" ? "output failed" : "output"}>{outputOf(run)}</pre>
    </>
  );
}

function TraceContent({ trace }: { trace: Trace }) {
  const [root, ...calls] = trace.spans;
  return (
    <>
      <dl className="summary">
        <dt>Trace</dt>
        <dd>
          <code>{trace.traceId}</code> {trace.name} ({trace.status})
        </dd>
        <dt>Models</dt>
        <dd>{trace.models.join(", ") || "none"}</dd>
        <dt>Cost</dt>
        <dd>{formatCost(trace.costUsd)}</dd>
      </dl>
      {root && (
        <>
          <h3>Root span {root.name}</h3>
          <pre className="output">{json(root.attributes)}</pre>
        </>
      )}
      {calls.map((s) => (
        <section key={s.spanId} aria-label={`Model call ${s.name}`}>
          <h3>
            Model call {s.name} ({s.generation?.requestModel ?? "unknown model"})
          </h3>
          <h4>Input messages</h4>
          <pre className="output">{json(s.generation?.inputMessages ?? [])}</pre>
          <h4>Output messages</h4>
          <pre className="output">{json(s.generation?.outputMessages ?? [])}</pre>
        </section>
      ))}
    </>
  );
}

/** The item under review: its run (inputs, messages, output, model, cost) or its trace's model calls. */
export function ItemContent({ content }: { content: Content }) {
  if (content.run) return <RunContent run={content.run as Run} messages={content.messages} />;
  if (content.trace) return <TraceContent trace={content.trace} />;
  return <p className="empty">The run or trace of this item no longer exists.</p>;
}
