import Type from "typebox";
import type { GatewayApp, GatewayDeps } from "../http/gateway-app.js";
import { Body, Nullable, OneOf } from "../schemas.js";
import { ChangeMessage, Description, ModelId, Name, OrganizationId } from "./catalog-requests.js";
import { fromCatalog, promptVersionView, promptView } from "./catalog-views.js";
import { PromptContentFields, promptContentOf } from "./prompt-content.js";
import { PromptListQuerystring, promptListFilters, registerPromptFolderRoutes } from "./prompt-folder-routes.js";
import { byIdWrite, createWrite, registerVersionedRoutes } from "./versioned-routes.js";

/** Prompts and their immutable versions (api.md "Prompts"; docs/api.md "Stability": public beta). */
export function registerPromptRoutes(app: GatewayApp, deps: GatewayDeps): void {
  const { catalog } = deps.clients;
  registerVersionedRoutes(app, "Prompt", {
    view: promptView,
    versionView: fromCatalog.view("prompt version", promptVersionView),
    list: (request, options, query) => catalog.listPrompts({ ...request, ...promptListFilters(query) }, options),
    listQuerystring: PromptListQuerystring,
    afterList: (app) => registerPromptFolderRoutes(app, deps),
    create: createWrite({
      summary: "Create a prompt (it has no version yet)",
      body: Body({
        organizationId: OrganizationId,
        name: Name,
        description: Type.Optional(Description),
        defaultModel: Type.Optional(Nullable(ModelId)),
      }),
      call: ({ body: { organizationId, name, description, defaultModel } }, options) =>
        catalog.createPrompt(
          { organizationId, name, description: description ?? "", defaultModel: defaultModel ?? undefined },
          options,
        ),
    }),
    get: {
      summary:
        "A prompt with the version ?versionId= names (default: the published one, else the latest); ?partials=true: with what it includes now",
      querystring: Type.Object(
        {
          versionId: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
          partials: Type.Optional(
            OneOf(["true", "false"], {
              description: 'true: the version\'s partials as a run would render them now (api.md "Partials")',
            }),
          ),
        },
        { additionalProperties: false },
      ),
      call: (args, options, query) => catalog.getPrompt({ ...args, withPartials: query.partials === "true" }, options),
    },
    update: byIdWrite({
      summary: "Change a prompt's name, description or default model (null clears it)",
      body: Body({
        name: Type.Optional(Name),
        description: Type.Optional(Description),
        defaultModel: Type.Optional(Nullable(ModelId)),
      }),
      call: ({ id, body: { name, description, defaultModel } }, options) =>
        catalog.updatePrompt(
          { id, name, description, defaultModel: defaultModel ?? undefined, clearDefaultModel: defaultModel === null },
          options,
        ),
    }),
    createVersion: byIdWrite({
      summary: "Create an immutable draft version of a prompt",
      body: PromptVersionBody,
      call: ({ id, body: { message, ...content } }, options) =>
        catalog.createPromptVersion({ promptId: id, message: message ?? "", ...promptContentOf(content) }, options),
    }),
    diff: ({ id, ...versions }, options) => catalog.diffPromptVersions({ promptId: id, ...versions }, options),
    publish: byIdWrite({
      summary: "Publish a draft version of the prompt; answers the prompt",
      body: Body({ versionId: Type.String({ minLength: 1, maxLength: 100 }) }),
      call: ({ id, body }, options) =>
        catalog.publishPromptVersion({ promptId: id, versionId: body.versionId }, options),
    }),
  });
}

const PromptVersionBody = Body({ ...PromptContentFields, message: Type.Optional(ChangeMessage) });
