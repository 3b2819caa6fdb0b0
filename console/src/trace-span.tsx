import type { Generation, Span } from "@kiln/sdk";
import type { Navigate } from "./router.js";
import { exactCost, formatCost, formatCount } from "./run-format.js";
import { Messages } from "./trace-messages.js";
import { durationOf, TraceStatus } from "./traces.js";
import { Link } from "./ui.js";

const count = (n: number | null) => (n === null ? "not reported" : formatCount(n));

/**
 * A model call: model, provider, usage, cost ("unpriced", never $0), its messages and the tools it
 * asked for. A call of a Kiln run (`runId`) carries no input messages in its span: Kiln keeps them
 * on the run, rendered from its version (docs/observability.md "Kiln's runs as traces"), so the
 * panel points there.
 */
function GenerationPanel({ g, runId, navigate }: { g: Generation; runId?: string; navigate: Navigate }) {
  const extra: [string, number | null][] = [
    ["Cache read input tokens", g.cacheReadInputTokens],
    ["Cache write input tokens", g.cacheCreationInputTokens],
    ["Reasoning tokens", g.reasoningTokens],
  ];
  return (
    <section aria-label="Model call">
      <h3>Model call</h3>
      <dl className="summary">
        <dt>Model</dt>
        <dd>
          {g.responseModel ?? g.requestModel ?? "unknown"}
          {g.responseModel && g.requestModel && g.responseModel !== g.requestModel ? ` (asked ${g.requestModel})` : ""}
        </dd>
        <dt>Provider</dt>
        <dd>{g.provider ?? "unknown"}</dd>
        {g.operation && (
          <>
            <dt>Operation</dt>
            <dd>{g.operation}</dd>
          </>
        )}
        <dt>Usage</dt>
        <dd>
          {count(g.inputTokens)} in / {count(g.outputTokens)} out
        </dd>
        {extra
          .filter(([, n]) => n !== null)
          .map(([name, n]) => (
            <div key={name} className="dl-row">
              <dt>{name}</dt>
              <dd>{count(n)}</dd>
            </div>
          ))}
        <dt>Cost</dt>
        <dd title={exactCost(g.costUsd)}>{formatCost(g.costUsd)}</dd>
        {g.finishReasons.length > 0 && (
          <>
            <dt>Finish</dt>
            <dd>{g.finishReasons.join(", ")}</dd>
          </>
        )}
        {g.errorType && (
          <>
            <dt>Error type</dt>
            <dd>{g.errorType}</dd>
          </>
        )}
      </dl>
      <h4>Input</h4>
      {g.inputMessages || g.systemInstructions ? (
        <>
          <Messages value={g.systemInstructions} defaultRole="system" label="System instructions" />
          <Messages value={g.inputMessages} defaultRole="user" label="Input messages" />
        </>
      ) : runId ? (
        <p className="hint">
          Kiln keeps this call's messages on its run, rendered from the version it ran: see the rendered messages of{" "}
          <Link to={`/runs/${runId}`} navigate={navigate}>
            {runId}
          </Link>
          .
        </p>
      ) : (
        <p className="hint">The span carried no input messages.</p>
      )}
      <h4>Output</h4>
      {g.outputMessages && g.outputMessages.length > 0 ? (
        <Messages value={g.outputMessages} defaultRole="assistant" label="Output messages" />
      ) : (
        <p className="hint">The span carried no output messages.</p>
      )}
      {g.toolCalls && g.toolCalls.length > 0 && !g.outputMessages?.length && (
        <>
          <h4>Tool calls asked for</h4>
          <pre className="output">{JSON.stringify(g.toolCalls, null, 2)}</pre>
        </>
      )}
    </section>
  );
}

/** The selected span: what it is, its model call or tool call, and every attribute as it came. */
export function SpanPanel({ span, runId: ownerRun, navigate }: { span: Span; runId?: string; navigate: Navigate }) {
  const runId = span.attributes["kiln.run.id"];
  return (
    <section className="card span-panel" aria-label={`Span ${span.name}`}>
      <h2>{span.name}</h2>
      <dl className="summary">
        <dt>Status</dt>
        <dd>
          <TraceStatus status={span.status} /> {span.statusMessage}
        </dd>
        <dt>Duration</dt>
        <dd>{durationOf(span.startTime, span.endTime)}</dd>
        <dt>Kind</dt>
        <dd>{span.kind}</dd>
        <dt>Span id</dt>
        <dd>
          <code>{span.spanId}</code>
        </dd>
        {span.scope && (
          <>
            <dt>Scope</dt>
            <dd>{span.scope}</dd>
          </>
        )}
        {span.continuedByRunId && (
          <>
            <dt>Continued by</dt>
            <dd>
              <Link to={`/runs/${span.continuedByRunId}`} navigate={navigate}>
                {span.continuedByRunId}
              </Link>{" "}
              <span className="hint">(this call's usage and cost are counted in the run's model call)</span>
            </dd>
          </>
        )}
        {typeof runId === "string" && (
          <>
            <dt>Kiln run</dt>
            <dd>
              <Link to={`/runs/${runId}`} navigate={navigate}>
                {runId}
              </Link>
            </dd>
          </>
        )}
      </dl>
      {span.generation && <GenerationPanel g={span.generation} runId={ownerRun} navigate={navigate} />}
      {span.toolCall && (
        <section aria-label="Tool call">
          <h3>
            Tool call <code>{span.toolCall.name}</code>
          </h3>
          <h4>Arguments</h4>
          <pre className="output">{JSON.stringify(span.toolCall.arguments, null, 2)}</pre>
          <h4>Result</h4>
          <pre className="output">{JSON.stringify(span.toolCall.result, null, 2)}</pre>
        </section>
      )}
      {span.unmappedAttributes.length > 0 && (
        <section aria-label="Not mapped" className="unmapped-attributes">
          <h4>Not mapped</h4>
          <p className="hint">
            Attributes Kiln's mapping did not read (kept as they came, below)
            {span.unmappedAttributesTruncated ? "; the first 64 shown" : ""}.
          </p>
          <ul className="inline-list">
            {span.unmappedAttributes.map((key) => (
              <li key={key}>
                <code>{key}</code>
              </li>
            ))}
          </ul>
        </section>
      )}
      <details>
        <summary>Attributes ({Object.keys(span.attributes).length})</summary>
        <pre className="output">{JSON.stringify(span.attributes, null, 2)}</pre>
        <h4>Resource</h4>
        <pre className="output">{JSON.stringify(span.resourceAttributes, null, 2)}</pre>
        {span.events.length > 0 && (
          <>
            <h4>Events</h4>
            <pre className="output">{JSON.stringify(span.events, null, 2)}</pre>
          </>
        )}
        {span.logEvents.length > 0 && (
          <>
            <h4>Log events</h4>
            <pre className="output">{JSON.stringify(span.logEvents, null, 2)}</pre>
          </>
        )}
      </details>
    </section>
  );
}
