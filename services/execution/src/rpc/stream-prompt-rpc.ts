/**
 * StreamPromptRun: runPrompt's run with its model output sent as it arrives. The run goes its own
 * way (resolve, execute, store, publish) and this handler only relays what it reports, in order:
 * the run id, the deltas, the stored run. A caller that goes away aborts the call's signal, which
 * cancels the model call; the run is then stored as cancelled all the same, since storing does not
 * depend on anyone reading the stream.
 */
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { invalidArgument } from "@kiln/kit/errors";
import { messageIssues } from "@kiln/kit/rpc/input";
import type { ModelDelta } from "@kiln/models/provider";
import {
  RunPromptRequestSchema,
  type StreamPromptRunRequest,
  type StreamPromptRunResponseSchema,
} from "@kiln/proto/execution";
import type { Runner } from "../runs/runner.js";
import { runCallContext } from "./agent-rpc.js";
import { runToProto } from "./run-proto.js";

type Chunk = MessageInitShape<typeof StreamPromptRunResponseSchema>;

function chunkOf(delta: ModelDelta): Chunk {
  if (delta.type === "text") return { chunk: { case: "text", value: delta.text } };
  return {
    chunk: {
      case: "toolCall",
      value: { index: delta.index, id: delta.id ?? "", name: delta.name ?? "", arguments: delta.arguments },
    },
  };
}

export async function* streamPromptRun(
  runner: Runner,
  req: StreamPromptRunRequest,
  ctx: HandlerContext,
): AsyncGenerator<Chunk> {
  const run = req.run ?? create(RunPromptRequestSchema);
  // The input interceptor reads unary requests only: the run request inside gets the same look.
  const issues = messageIssues(run);
  if (issues.length > 0) throw invalidArgument("invalid request", issues);
  const queue: Chunk[] = [];
  let wake: (() => void) | undefined;
  const push = (chunk: Chunk) => {
    queue.push(chunk);
    wake?.();
  };
  let ended = false;
  const finished = runner
    // The trace context is answered in the stream's headers, sent before the first message.
    .streamPrompt(run, runCallContext(ctx), {
      onStart: (runId, cacheStatus) => push({ chunk: { case: "runId", value: runId }, cacheStatus: cacheStatus ?? "" }),
      onDelta: (delta) => push(chunkOf(delta)),
    })
    .then((run) => push({ chunk: { case: "run", value: runToProto(run) } }))
    .finally(() => {
      ended = true;
      wake?.();
    });
  // Nobody may be left to read a failure (the caller went away): it is not unhandled.
  finished.catch(() => undefined);
  for (;;) {
    const next = queue.shift();
    if (next) {
      yield next;
      continue;
    }
    if (ended) break;
    await new Promise<void>((resolve) => {
      wake = resolve;
    });
    wake = undefined;
  }
  // A request the run refused (400, 403, 404…) fails the stream before any message.
  await finished;
}
