import type { ToolPin } from "../domain/tool-pins.js";
import type { StepType } from "../domain/workflow.js";
import type {
  AgentVersionDoc,
  CompositionStepDoc,
  PromptVersionDoc,
  SkillVersionDoc,
  ToolVersionDoc,
} from "../store/catalog-store.js";

/** An attached tool at its pinned version; `description` is the tool's current one. */
export interface ResolvedToolView {
  pin: ToolPin;
  description: string;
  version: ToolVersionDoc;
}

/** A prompt a resolved version includes, at the version its label points at now (api.md "Partials"). */
export interface ResolvedPartialView {
  name: string;
  label: string;
  promptId: string;
  versionId: string;
  version: number;
  /** The text a tag naming it is replaced with. */
  template: string;
}

export interface ResolvedPromptView {
  version: PromptVersionDoc;
  /** The prompt's current name. */
  promptName: string;
  /** The version's own tools, in the order it pins them. */
  tools: ResolvedToolView[];
  /** The response-cache default of the label the resolve went through (production for the live version). */
  labelCacheTtlSeconds?: number;
  /** Every prompt it includes, directly or not; absent: it includes none. */
  partials?: ResolvedPartialView[];
  /** An include that stands for nothing now (or a cycle, a chain too deep): its runs fail. */
  unresolvedPartial?: { reference: string; message: string };
}

export interface ResolvedSkillView {
  version: SkillVersionDoc;
  /** The composition in order, each step with its pinned prompt version resolved. */
  steps: { step: CompositionStepDoc; prompt: ResolvedPromptView }[];
  /** The skill version's own tools, offered to every step besides the step's prompt tools. */
  tools: ResolvedToolView[];
}

export interface ResolvedAgentStepView {
  stepId: string;
  type: StepType;
  prompt?: ResolvedPromptView;
  skill?: ResolvedSkillView;
  tool?: ResolvedToolView;
}

export interface ResolvedAgentView {
  /** Its workflow has every reference pinned (a draft's pinned at resolve time). */
  version: AgentVersionDoc;
  /** One per workflow step, in the order of `steps`. */
  steps: ResolvedAgentStepView[];
}
