import { invalidArgument } from "@kiln/kit/errors";
import { newId } from "@kiln/kit/ids";
import { findPage } from "@kiln/kit/pagination";
import type { Principal } from "@kiln/kit/principal";
import { SCOPES } from "./access.js";
import { checkNewCases, type NewCaseInput } from "./domain/new-cases.js";
import type { EvaluationDeps } from "./evaluation-deps.js";
import type { CaseDoc } from "./store/evaluation-store.js";

/** Evaluation cases: created in batches per skill, listed newest first. */
export function createCases(deps: EvaluationDeps) {
  const c = deps.collections;
  return {
    /** Every case is checked before any is stored: a batch is stored whole or not at all. */
    async createCases(
      principal: Principal,
      input: { organizationId: string; skillId: string; cases: NewCaseInput[] },
    ): Promise<CaseDoc[]> {
      const skill = await deps.access.skill(principal, input.organizationId, input.skillId, SCOPES.evaluationsWrite);
      const checked = checkNewCases(input.cases);
      if (checked.issues.length > 0) throw invalidArgument("the evaluation cases are invalid", checked.issues);
      const createdAt = deps.now();
      const docs = checked.cases.map(
        (k): CaseDoc => ({
          _id: newId("evc"),
          skillId: skill.id,
          organizationId: skill.organizationId,
          name: k.name,
          inputJson: k.inputJson,
          expectedOutputJson: k.expectedOutputJson,
          assertionsJson: k.assertionsJson,
          createdAt,
        }),
      );
      // Fresh ids never clash, so the ordered insert stores the whole batch.
      await c.cases.insertMany(docs);
      return docs;
    },

    async listCases(
      principal: Principal,
      input: { organizationId: string; skillId: string; limit: number; cursor: string },
    ) {
      const skill = await deps.access.skill(principal, input.organizationId, input.skillId, SCOPES.evaluationsRead);
      return findPage(c.cases, { skillId: skill.id, organizationId: skill.organizationId }, input);
    },
  };
}

export type Cases = ReturnType<typeof createCases>;
