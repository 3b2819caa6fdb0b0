/**
 * A prompt run whose answer streams, as the OpenAI-compatible routes consume it (Chat Completions
 * here, the Responses API too): the execution service's StreamPromptRun read as events. The run is
 * the same as RunPrompt's (stored, with its run.completed event); `start` comes once it is
 * resolved, the deltas as the provider sends them, `done` with the stored run (also when it
 * failed). A request the run refuses rejects the first `next()` (a ConnectError, before `start`).
 * Aborting `options.signal` (the client went away) cancels the run, which is stored as failed with
 * error code `cancelled` and the text received so far.
 */
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { CallOptions, Client } from "@connectrpc/connect";
import type { ExecutionService, Run, RunPromptRequestSchema } from "@kiln/proto/execution";

export type RunStreamEvent =
  /** `cacheStatus`: "hit" or "miss" when the run uses the response cache, else "". */
  | { type: "start"; runId: string; cacheStatus: string }
  | { type: "text"; delta: string }
  /** A call of one of the caller's tools: its first event has `id` and `name`, later ones pieces of `arguments`. */
  | { type: "tool_call"; index: number; id: string; name: string; arguments: string }
  | { type: "done"; run: Run };

/** Starts a prompt run and yields its events as they arrive (see above). */
export async function* promptRunStream(
  execution: Client<typeof ExecutionService>,
  run: MessageInitShape<typeof RunPromptRequestSchema>,
  options: CallOptions,
): AsyncGenerator<RunStreamEvent> {
  for await (const message of execution.streamPromptRun({ run }, options)) {
    const { chunk } = message;
    switch (chunk.case) {
      case "runId":
        yield { type: "start", runId: chunk.value, cacheStatus: message.cacheStatus };
        break;
      case "text":
        yield { type: "text", delta: chunk.value };
        break;
      case "toolCall":
        yield {
          type: "tool_call",
          index: chunk.value.index,
          id: chunk.value.id,
          name: chunk.value.name,
          arguments: chunk.value.arguments,
        };
        break;
      case "run":
        yield { type: "done", run: chunk.value };
        return;
    }
  }
  throw new Error("execution ended the stream without the run");
}

/**
 * Waits for a live run's first piece: the run's id and the first event after `start` (a delta, or
 * `done` when nothing streamed). A refusal before `start` is thrown as `refused` makes it, so the
 * route can still answer it as JSON.
 */
export async function firstOfStream(
  events: AsyncIterator<RunStreamEvent>,
  refused: (error: unknown) => unknown,
): Promise<{ runId: string; cacheStatus: string; first: Exclude<RunStreamEvent, { type: "start" }> }> {
  let runId = "";
  let cacheStatus = "";
  for (;;) {
    let step: IteratorResult<RunStreamEvent>;
    try {
      step = await events.next();
    } catch (e) {
      throw refused(e);
    }
    if (step.done) throw new Error("the run stream ended without the run");
    if (step.value.type === "start") ({ runId, cacheStatus } = step.value);
    else return { runId, cacheStatus, first: step.value };
  }
}
