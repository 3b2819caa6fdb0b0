/**
 * The OpenAI-protocol stub as a process of its own, for `pnpm bench`: a model provider is another
 * machine, so it must not share an event loop with the load generator. Prints its base URL as the
 * first line on stdout; stops on SIGTERM. `node --import tsx test/bench/stub-process.ts <latencyMs>`.
 */
import { startOpenAIStub } from "@kiln/testing/openai-stub";

const stub = await startOpenAIStub({ latencyMs: Number(process.argv[2] ?? 0), recordRequests: false });
process.stdout.write(`${stub.baseUrl}\n`);
process.on("SIGTERM", () => {
  stub.close().then(() => process.exit(0));
});
