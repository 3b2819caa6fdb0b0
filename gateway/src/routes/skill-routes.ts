import { LIMITS } from "@kiln/kit/limits";
import Type from "typebox";
import type { GatewayApp, GatewayDeps } from "../http/gateway-app.js";
import { rpcOptions } from "../http/request.js";
import { Body, errorResponses, List, ref } from "../schemas.js";
import {
  Description,
  DiffQuerystring,
  Id,
  IdParams,
  JsonObject,
  jsonText,
  ListQuerystring,
  listRequest,
  Name,
  organizationOf,
  ToolSelectorBody,
  toolSelectors,
  VersionIdQuerystring,
  VersionParams,
} from "./catalog-requests.js";
import {
  SkillVersionView,
  SkillView,
  skillVersionView,
  skillView,
  VersionDiffView,
  versionDiffView,
} from "./catalog-views.js";

const tags = ["skills"];
const config = { stability: "beta" as const };

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

/** Skills, their versions and compositions (api.md "Skills", "Version diffs"; spec §9: public beta). */
export function registerSkillRoutes(app: GatewayApp, deps: GatewayDeps): void {
  const { catalog } = deps.clients;

  app.get(
    "/api/skills",
    {
      config,
      schema: {
        tags,
        operationId: "listSkills",
        summary: "List an organization's skills, newest first",
        querystring: ListQuerystring,
        response: { 200: List(ref(SkillView)), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const r = await catalog.listSkills(listRequest(request, request.query), rpcOptions(request));
      return { data: r.skills.map(skillView), nextCursor: r.nextCursor || null };
    },
  );

  app.post(
    "/api/skills",
    {
      config,
      schema: {
        tags,
        operationId: "createSkill",
        summary: "Create a skill with an empty draft version",
        body: Body({
          organizationId: Type.Optional(
            Type.String({ minLength: 1, maxLength: 100, description: "required unless the caller is an API key" }),
          ),
          name: Name,
          description: Type.Optional(Description),
        }),
        response: { 201: ref(SkillView), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const b = request.body;
      const r = await catalog.createSkill(
        { organizationId: organizationOf(request, b.organizationId), name: b.name, description: b.description ?? "" },
        rpcOptions(request),
      );
      return reply.code(201).send(skillView(r.skill));
    },
  );

  app.get(
    "/api/skills/:id",
    {
      config,
      schema: {
        tags,
        operationId: "getSkill",
        summary:
          "A skill; its promptComposition, tools and schemas describe ?versionId= (default: the draft, else the published version)",
        params: IdParams,
        querystring: VersionIdQuerystring,
        response: { 200: ref(SkillView), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const r = await catalog.getSkill(
        { id: request.params.id, versionId: request.query.versionId ?? "" },
        rpcOptions(request),
      );
      return skillView(r.skill);
    },
  );

  app.patch(
    "/api/skills/:id",
    {
      config,
      schema: {
        tags,
        operationId: "updateSkill",
        summary: "Change a skill's name or description",
        params: IdParams,
        body: Body({ name: Type.Optional(Name), description: Type.Optional(Description) }),
        response: { 200: ref(SkillView), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const { name, description } = request.body;
      const r = await catalog.updateSkill({ id: request.params.id, name, description }, rpcOptions(request));
      return skillView(r.skill);
    },
  );

  app.post(
    "/api/skills/:id/versions",
    {
      config,
      schema: {
        tags,
        operationId: "createSkillVersion",
        summary: "Create the skill's draft version, copied from fromVersionId (default: the latest); one draft at most",
        params: IdParams,
        body: Body({ fromVersionId: Type.Optional(Id) }),
        response: { 201: ref(SkillVersionView), ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (request, reply) => {
      const r = await catalog.createSkillVersion(
        { skillId: request.params.id, fromVersionId: request.body.fromVersionId ?? "" },
        rpcOptions(request),
      );
      return reply.code(201).send(skillVersionView(r.version));
    },
  );

  app.post(
    "/api/skills/:id/publish",
    {
      config,
      schema: {
        tags,
        operationId: "publishSkillVersion",
        summary: "Publish a skill version (default: the draft); answers the skill",
        params: IdParams,
        body: Body({ versionId: Type.Optional(Id) }),
        response: { 200: ref(SkillView), ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (request) => {
      const r = await catalog.publishSkillVersion(
        { skillId: request.params.id, versionId: request.body.versionId ?? "" },
        rpcOptions(request),
      );
      return skillView(r.skill);
    },
  );

  app.get(
    "/api/skills/:id/versions/:versionId/diff",
    {
      config,
      schema: {
        tags,
        operationId: "diffSkillVersions",
        summary: "The changes from ?against= (default: the version before) to this skill version",
        params: VersionParams,
        querystring: DiffQuerystring,
        response: { 200: ref(VersionDiffView), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const r = await catalog.diffSkillVersions(
        {
          skillId: request.params.id,
          versionId: request.params.versionId,
          againstVersionId: request.query.against ?? "",
        },
        rpcOptions(request),
      );
      return versionDiffView(r.diff);
    },
  );

  app.post(
    "/api/skill-versions/:id/prompts",
    {
      config,
      schema: {
        tags,
        operationId: "replaceSkillPrompts",
        summary: "replacePrompts: replace the prompt composition of a draft skill version; answers the skill",
        params: IdParams,
        body: Body({ prompts: Type.Array(PromptStep, { maxItems: LIMITS.promptsPerSkill }) }),
        response: { 200: ref(SkillView), ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (request) => {
      const r = await catalog.replaceSkillPrompts(
        {
          skillVersionId: request.params.id,
          prompts: request.body.prompts.map((p) => ({
            promptId: p.promptId,
            promptVersionId: p.promptVersionId,
            alias: p.alias,
            variablesJson: jsonText(p.variables),
          })),
        },
        rpcOptions(request),
      );
      return skillView(r.skill);
    },
  );

  app.post(
    "/api/skill-versions/:id/tools",
    {
      config,
      schema: {
        tags,
        operationId: "replaceSkillTools",
        summary: "Replace the tools every step of a draft skill version may call; answers the skill",
        params: IdParams,
        body: Body({ tools: Type.Array(ToolSelectorBody, { maxItems: LIMITS.toolsPerVersion }) }),
        response: { 200: ref(SkillView), ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (request) => {
      const r = await catalog.replaceSkillTools(
        { skillVersionId: request.params.id, tools: toolSelectors(request.body.tools) },
        rpcOptions(request),
      );
      return skillView(r.skill);
    },
  );
}
