import { LIMITS } from "@kiln/kit/limits";
import Type from "typebox";
import type { GatewayApp, GatewayDeps } from "../http/gateway-app.js";
import { answers, operations } from "../http/operation.js";
import { rpcOptions } from "../http/request.js";
import { Body } from "../schemas.js";
import {
  Id,
  IdParams,
  JsonObject,
  optionalJsonTextMessage,
  ToolSelectorBody,
  toolSelectors,
} from "./catalog-requests.js";
import { SkillView, skillVersionView, skillView } from "./skill-views.js";
import { changeMetadata, copyToDraft, createByName, publishVersion } from "./versioned-bodies.js";
import { registerVersionedRoutes } from "./versioned-routes.js";

const op = operations({ tags: ["skills"], stability: "beta" });

const PromptStep = Body({
  promptId: Id,
  promptVersionId: Type.Optional(
    Type.String({ minLength: 1, maxLength: 100, description: "default: the prompt's published version" }),
  ),
  alias: Type.Optional(Type.String({ maxLength: 100, description: "default step<order>; unique in the composition" })),
  variables: Type.Optional(
    JsonObject(
      'bindings: {name: "{{input.x}}" | "{{steps.<alias>.output}}" | "{{steps.<alias>.output.field}}" | literal}',
      LIMITS.variablesBytes,
    ),
  ),
});

/** Skills, their versions and compositions (api.md "Skills", "Version diffs"; docs/api.md "Stability": public beta). */
export function registerSkillRoutes(app: GatewayApp, deps: GatewayDeps): void {
  const { catalog } = deps.clients;
  registerVersionedRoutes(app, "Skill", {
    view: skillView,
    versionView: skillVersionView,
    list: catalog.listSkills,
    create: createByName("Create a skill with an empty draft version", catalog.createSkill),
    get: {
      summary:
        "A skill; its promptComposition, tools and schemas describe ?versionId= (default: the draft, else the published version)",
      call: catalog.getSkill,
    },
    update: changeMetadata("Change a skill's name or description", catalog.updateSkill),
    createVersion: copyToDraft(
      "Create the skill's draft version, copied from fromVersionId (default: the latest); one draft at most",
      (skillId, fromVersionId, options) => catalog.createSkillVersion({ skillId, fromVersionId }, options),
    ),
    publish: publishVersion(
      "Publish a skill version (default: the draft); answers the skill",
      (skillId, versionId, options) => catalog.publishSkillVersion({ skillId, versionId }, options),
    ),
    diff: ({ id, ...versions }, options) => catalog.diffSkillVersions({ skillId: id, ...versions }, options),
  });

  app.post(
    "/api/skill-versions/:id/prompts",
    op(
      "replaceSkillPrompts",
      "replacePrompts: replace the prompt composition of a draft skill version; answers the skill",
      {
        params: IdParams,
        body: Body({ prompts: Type.Array(PromptStep, { maxItems: LIMITS.promptsPerSkill }) }),
        response: answers(SkillView, 400, 401, 403, 404, 409),
      },
    ),
    async (request) => {
      const r = await catalog.replaceSkillPrompts(
        {
          skillVersionId: request.params.id,
          prompts: request.body.prompts.map((p) => ({
            promptId: p.promptId,
            promptVersionId: p.promptVersionId,
            alias: p.alias,
            variables: optionalJsonTextMessage(p.variables),
          })),
        },
        rpcOptions(request),
      );
      return skillView(r.skill);
    },
  );

  app.post(
    "/api/skill-versions/:id/tools",
    op("replaceSkillTools", "Replace the tools every step of a draft skill version may call; answers the skill", {
      params: IdParams,
      body: Body({ tools: Type.Array(ToolSelectorBody, { maxItems: LIMITS.toolsPerVersion }) }),
      response: answers(SkillView, 400, 401, 403, 404, 409),
    }),
    async (request) => {
      const r = await catalog.replaceSkillTools(
        { skillVersionId: request.params.id, tools: toolSelectors(request.body.tools) },
        rpcOptions(request),
      );
      return skillView(r.skill);
    },
  );
}
