import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { ConnectRouter } from "@connectrpc/connect";
import { authorizeOnResource, type IdentityAuth } from "@kiln/kit/authorizer";
import { optionalJsonText } from "@kiln/kit/json-text";
import { principalOf } from "@kiln/kit/principal";
import type { ProviderRegistry } from "@kiln/models/registry";
import { ExecutionService } from "@kiln/proto/execution";
import type { AgentRunner } from "../runs/agent-runner.js";
import type { Completer } from "../runs/complete.js";
import type { Runner } from "../runs/runner.js";
import { agentRpcHandlers, callContext, runCallContext } from "./agent-rpc.js";
import { runToProto, usageToProto } from "./run-proto.js";
import { streamPromptRun } from "./stream-prompt-rpc.js";

export function registerExecutionRpc(
  router: ConnectRouter,
  catalog: { models: ProviderRegistry; identityAuth: IdentityAuth },
  runner: Runner,
  agents?: AgentRunner,
  complete?: Completer,
): void {
  router.service(ExecutionService, {
    ...(agents ? agentRpcHandlers(agents) : {}),
    // Any authenticated caller may list models (api.md "Scopes per route"); an organization's own, its members.
    async listModels(req, ctx) {
      const { organizationId } = req;
      if (organizationId !== "") {
        const access = { organizationId, scope: "", what: "organization", requireAi: false };
        await authorizeOnResource(catalog.identityAuth, principalOf(ctx), access);
      }
      const listed = await catalog.models.list(organizationId !== "" ? { organizationId } : undefined);
      return {
        models: listed.map((m) => ({
          id: m.id,
          provider: m.provider,
          model: m.model,
          available: m.available,
          capabilities: m.capabilities,
          pricing: {
            inputPerMtokUsd: m.pricing.inputPerMTokUsd ?? undefined,
            outputPerMtokUsd: m.pricing.outputPerMTokUsd ?? undefined,
            cachedInputPerMtokUsd: m.pricing.cachedInputPerMTokUsd ?? undefined,
            cacheWritePerMtokUsd: m.pricing.cacheWritePerMTokUsd ?? undefined,
            reasoningPerMtokUsd: m.pricing.reasoningPerMTokUsd ?? undefined,
          },
          connectionId: m.connectionId ?? "",
          tokensPerMinute: m.tokensPerMinute,
        })),
      };
    },
    async runPrompt(req, ctx) {
      return { run: runToProto(await runner.runPrompt(req, runCallContext(ctx))) };
    },
    streamPromptRun: (req, ctx) => streamPromptRun(runner, req, ctx),
    async runSkill(req, ctx) {
      return { run: runToProto(await runner.runSkill(req, runCallContext(ctx))) };
    },
    async previewSkill(req, ctx) {
      return { run: runToProto(await runner.previewSkill(req, callContext(ctx)), true) };
    },
    async listRuns(req, ctx) {
      const page = await runner.listRuns(
        {
          ...req,
          createdAfter: req.createdAfter ? timestampDate(req.createdAfter) : undefined,
          createdBefore: req.createdBefore ? timestampDate(req.createdBefore) : undefined,
        },
        callContext(ctx),
      );
      return { runs: page.items.map((r) => runToProto(r)), nextCursor: page.nextCursor };
    },
    async getRun(req, ctx) {
      return { run: runToProto(await runner.getRun(req, callContext(ctx))) };
    },
    async complete(req, ctx) {
      if (!complete) throw new Error("Complete is not wired");
      const c = await complete(req, runCallContext(ctx));
      return {
        text: c.text,
        structured: optionalJsonText(c.json),
        provider: c.provider,
        model: c.model,
        usage: usageToProto(c.usage),
        estimatedCostUsd: c.estimatedCostUsd ?? undefined,
        costNotes: c.costNotes,
        latencyMs: BigInt(c.latencyMs),
        runId: c.runId,
      };
    },
  });
}
