import { EventSourceParserStream } from "eventsource-parser/stream";
import { KilnError } from "./kiln-error.js";

/**
 * The JSON `data` of each Server-Sent Event of a streaming answer, as it arrives (eventsource-parser
 * reads the stream). An answer that is not a stream (a refusal before the run started) is thrown as
 * the KilnError of its JSON body.
 */
export async function* jsonEvents<T>(response: Response): AsyncGenerator<T> {
  const type = response.headers.get("content-type") ?? "";
  if (!response.ok || !type.startsWith("text/event-stream") || !response.body) {
    const text = await response.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON: KilnError says the status and the text
    }
    throw KilnError.fromResponse(response, body);
  }
  const events = response.body.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream());
  const reader = events.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield JSON.parse(value.data) as T;
    }
  } finally {
    reader.releaseLock();
  }
}
