/**
 * `item_reference` input items of the Responses API (docs/openai-compatible.md "Responses API"):
 * clients that keep a conversation (the AI SDK with its default `store`) send an earlier answer's
 * message back as a reference to its id. Kiln keeps no conversation state, but every answer is a
 * stored run: a message item's id is `msg_<run id>`, so the reference reads as that run's answer
 * (read back in the caller's organization, which takes `runs:read`). Any other reference is a 400.
 */
import type { Run } from "@kiln/proto/execution";
import { chatAnswerOf } from "./openai-chat-answer.js";
import { badRequest } from "./openai-errors.js";
import { isObject } from "./openai-request-fields.js";

const MESSAGE_ID = /^msg_(.+)$/;

/**
 * The request body with each `item_reference` of its `input` replaced by the assistant message it
 * names; `readRun` answers a stored run of the caller's organization, undefined when there is none.
 */
export async function withReferencesResolved(
  body: unknown,
  readRun: (id: string) => Promise<Run | undefined>,
): Promise<unknown> {
  if (!isObject(body) || !Array.isArray(body.input)) return body;
  if (!body.input.some((item: unknown) => isObject(item) && item.type === "item_reference")) return body;
  const input = await Promise.all(
    body.input.map(async (item: unknown, i) => {
      if (!isObject(item) || item.type !== "item_reference") return item;
      const runId = typeof item.id === "string" ? MESSAGE_ID.exec(item.id)?.[1] : undefined;
      const run = runId === undefined ? undefined : await readRun(runId);
      if (run?.status !== "succeeded") {
        throw badRequest(
          "an item_reference must name the message of an earlier Kiln answer (msg_<run id>): Kiln keeps no other conversation state, send the items themselves",
          `input[${i}].id`,
        );
      }
      return { type: "message", role: "assistant", content: chatAnswerOf(run).content ?? "", id: item.id };
    }),
  );
  return { ...body, input };
}
