import type { Bus } from "@kiln/kit/bus";
import type { Logger } from "@kiln/kit/logger";
import type { Access } from "./access.js";
import type { RunCompletion } from "./run-completion.js";
import type { EvaluationCollections } from "./store/evaluation-store.js";

/** What the evaluation use cases run on. */
export interface EvaluationDeps {
  collections: EvaluationCollections;
  access: Access;
  completion: RunCompletion;
  bus: Bus;
  logger: Logger;
  now: () => Date;
}
