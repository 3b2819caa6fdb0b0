import { invalidArgument, notFound } from "@kiln/kit/errors";
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

    /**
     * Replaces one case's content (checked as a new case is). Runs started after it use the new
     * content; a run in progress may have read the case already.
     */
    async updateCase(
      principal: Principal,
      input: { organizationId: string; skillId: string; caseId: string; evaluationCase: NewCaseInput },
    ): Promise<CaseDoc> {
      const skill = await deps.access.skill(principal, input.organizationId, input.skillId, SCOPES.evaluationsWrite);
      const existing = await c.cases.findOne({ _id: input.caseId });
      if (!existing || existing.skillId !== skill.id || existing.organizationId !== skill.organizationId) {
        throw notFound("evaluation case");
      }
      const checked = checkNewCases([input.evaluationCase]);
      if (checked.issues.length > 0) {
        const issues = checked.issues.map((i) => ({ ...i, field: i.field.replace(/^cases\[0\]\.?/, "") }));
        throw invalidArgument("the evaluation case is invalid", issues);
      }
      const [k] = checked.cases;
      if (!k) throw new Error("a checked case vanished");
      const set = {
        name: k.name,
        inputJson: k.inputJson,
        expectedOutputJson: k.expectedOutputJson,
        assertionsJson: k.assertionsJson,
      };
      return (await c.cases.findOneAndUpdate({ _id: existing._id }, { $set: set })) ?? { ...existing, ...set };
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
