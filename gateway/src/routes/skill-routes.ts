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
  organizationOf,
  ToolSelectorBody,
  toolSelectors,
  VersionIdQuerystring,
} from "./catalog-requests.js";
import { SkillVersionView, SkillView, skillVersionView, skillView } from "./skill-views.js";
import { FromVersionBody, MetadataBody, NamedBody, OptionalVersionBody } from "./versioned-bodies.js";
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
  registerVersionedRoutes(app, {
    path: "/api/skills",
    tag: "skills",
    name: "Skill",
    view: SkillView,
    versionView: SkillVersionView,
    list: async (request, options) => {
      const r = await catalog.listSkills(request, options);
      return { data: r.skills.map(skillView), nextCursor: r.nextCursor };
    },
    create: {
      summary: "Create a skill with an empty draft version",
      body: NamedBody,
      call: async ({ body: b, request }, options) => {
        const organizationId = organizationOf(request, b.organizationId);
        const r = await catalog.createSkill(
          { organizationId, name: b.name, description: b.description ?? "" },
          options,
        );
        return skillView(r.skill);
      },
    },
    get: {
      summary:
        "A skill; its promptComposition, tools and schemas describe ?versionId= (default: the draft, else the published version)",
      querystring: VersionIdQuerystring,
      call: async (request, options) => skillView((await catalog.getSkill(request, options)).skill),
    },
    update: {
      summary: "Change a skill's name or description",
      body: MetadataBody,
      call: async ({ id, body }, options) =>
        skillView((await catalog.updateSkill({ id, name: body.name, description: body.description }, options)).skill),
    },
    createVersion: {
      summary: "Create the skill's draft version, copied from fromVersionId (default: the latest); one draft at most",
      body: FromVersionBody,
      conflicts: true,
      call: async ({ id, body }, options) => {
        const r = await catalog.createSkillVersion({ skillId: id, fromVersionId: body.fromVersionId ?? "" }, options);
        return skillVersionView(r.version);
      },
    },
    publish: {
      summary: "Publish a skill version (default: the draft); answers the skill",
      body: OptionalVersionBody,
      call: async ({ id, body }, options) => {
        const r = await catalog.publishSkillVersion({ skillId: id, versionId: body.versionId ?? "" }, options);
        return skillView(r.skill);
      },
    },
    diff: async ({ id, versionId, againstVersionId }, options) =>
      (await catalog.diffSkillVersions({ skillId: id, versionId, againstVersionId }, options)).diff,
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
