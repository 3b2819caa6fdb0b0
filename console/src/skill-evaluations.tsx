import type { EvaluationCase, EvaluationRun, NewEvaluationCase } from "@kiln/sdk";
import Papa from "papaparse";
import { useCallback, useState } from "react";
import { useAction, useLoaded } from "./action.js";
import { parseObject } from "./json-input.js";
import type { PageProps } from "./router.js";
import { ActButton, CheckList, DataTable, ErrorBox, Field, Link, Loading } from "./ui.js";

/**
 * Cases from a JSON array, or from CSV with a header row: `input.<field>` columns make the input,
 * `name`, `expectedOutput` and `contains` (an assertion) are those; any other column is refused.
 */
export function casesOf(text: string): NewEvaluationCase[] {
  if (text.trim().startsWith("[")) {
    const parsed = JSON.parse(text) as NewEvaluationCase[];
    if (!Array.isArray(parsed)) throw new Error("a JSON array of cases is expected");
    return parsed;
  }
  const csv = Papa.parse<Record<string, string>>(text.trim(), { header: true, skipEmptyLines: true });
  if (csv.errors.length > 0) throw new Error(`CSV row ${(csv.errors[0]?.row ?? 0) + 1}: ${csv.errors[0]?.message}`);
  const unknown = (csv.meta.fields ?? []).filter(
    (f) => !f.startsWith("input.") && !["name", "expectedOutput", "contains"].includes(f),
  );
  if (unknown.length > 0) throw new Error(`unknown CSV columns: ${unknown.join(", ")} (use input.<field>)`);
  return csv.data.map((row) => {
    const { name, expectedOutput, contains } = row;
    const input = Object.fromEntries(
      Object.entries(row).flatMap(([k, v]) => (k.startsWith("input.") ? [[k.slice("input.".length), v]] : [])),
    );
    return {
      ...(name ? { name } : {}),
      input,
      ...(expectedOutput ? { expectedOutput } : {}),
      ...(contains ? { assertions: [{ type: "contains" as const, value: contains }] } : {}),
    };
  });
}

/** Cases (add, import JSON or CSV), a run against draft and/or published, the summary and per-case table. */
export function Evaluations({ kiln, session, skillId, navigate }: PageProps & { skillId: string }) {
  const [caseInput, setCaseInput] = useState("{}");
  const [contains, setContains] = useState("");
  const [caseName, setCaseName] = useState("");
  const [editing, setEditing] = useState<string | null>(null);
  const [imported, setImported] = useState("");
  const [run, setRun] = useState<EvaluationRun | null>(null);
  const [against, setAgainst] = useState<string[]>([]);
  const { error, setError, act, submit } = useAction();
  const read = useCallback(
    async () => (await kiln.evaluations.listCases(skillId, { limit: 200 })).data,
    [kiln, skillId],
  );
  const { value: cases, reload } = useLoaded<EvaluationCase[]>(read, setError);
  const organizationId = session.organizationId;
  const add = async (newCases: NewEvaluationCase[]) => {
    await kiln.evaluations.createCases(skillId, { organizationId, cases: newCases });
    reload();
  };
  const saveCase = submit(async () => {
    const input = parseObject(caseInput, "The case input");
    const content = {
      ...(caseName ? { name: caseName } : {}),
      input,
      ...(contains ? { assertions: [{ type: "contains" as const, value: contains }] } : {}),
    };
    if (!editing) return add([content]);
    await kiln.evaluations.updateCase(skillId, editing, { organizationId, ...content });
    setEditing(null);
    reload();
  });
  const importCases = submit(() => add(casesOf(imported)));
  async function start() {
    const started = await kiln.evaluations.run(skillId, {
      organizationId,
      ...(against.length > 0 ? { targets: against } : {}),
    });
    let current = await kiln.evaluations.get(skillId, started.id);
    setRun(current);
    while (current.status === "queued" || current.status === "running") {
      await new Promise((r) => setTimeout(r, 300));
      current = await kiln.evaluations.get(skillId, started.id);
      setRun(current);
    }
  }
  const targets = run?.targets.map((t) => t.label) ?? [];
  return (
    <section aria-labelledby="evaluations">
      <h2 id="evaluations">Evaluations</h2>
      <ErrorBox error={error} />
      <div className="columns">
        <form className="card" onSubmit={saveCase}>
          <h3>{editing ? "Edit the case" : "Add a case"}</h3>
          <Field label="Case name" value={caseName} onChange={setCaseName} />
          <Field label="Case input (JSON)" multiline rows={3} value={caseInput} onChange={setCaseInput} />
          <Field label="Output contains" value={contains} onChange={setContains} />
          <button type="submit">{editing ? "Save case" : "Add case"}</button>
        </form>
        <form className="card" onSubmit={importCases}>
          <h3>Import cases</h3>
          <Field
            label="Cases: a JSON array of {name?, input, expectedOutput?, assertions?}, or CSV (name, input.<field>…, expectedOutput, contains)"
            multiline
            rows={3}
            value={imported}
            onChange={setImported}
          />
          <button type="submit">Import</button>
        </form>
      </div>
      {cases && cases.length > 0 && (
        <DataTable label="Cases" columns={["Case", "Input", "Assertions", "Action"]}>
          {cases.map((c, i) => (
            <tr key={c.id}>
              <td>{c.name || `case ${cases.length - i}`}</td>
              <td>
                <code>{JSON.stringify(c.input)}</code>
              </td>
              <td>{c.assertions.map((a) => a.type).join(", ") || (c.expectedOutput === null ? "—" : "equals")}</td>
              <td>
                <button
                  type="button"
                  className="secondary"
                  onClick={() => {
                    setEditing(c.id);
                    setCaseName(c.name);
                    setCaseInput(JSON.stringify(c.input));
                    const first = c.assertions.find((a) => a.type === "contains");
                    setContains(first && "value" in first ? String(first.value) : "");
                  }}
                >
                  Edit {c.name || `case ${cases.length - i}`}
                </button>
              </td>
            </tr>
          ))}
        </DataTable>
      )}
      {cases === null ? (
        <Loading what="cases" />
      ) : (
        <p>
          {cases.length} case{cases.length === 1 ? "" : "s"}.{" "}
          <CheckList
            values={["draft", "published"]}
            chosen={against}
            onChange={setAgainst}
            label={(t) => `against ${t}`}
            className="check inline"
          />{" "}
          <ActButton act={act} run={start} disabled={cases.length === 0}>
            Run evaluation
          </ActButton>
        </p>
      )}
      {run && (
        <article aria-label="Evaluation run" className="card">
          <p role="status" aria-live="polite">
            Evaluation {run.status}
            {run.status === "completed" || run.status === "cancelled" ? `: ${run.summary?.text ?? ""}` : "…"}
          </p>
          {run.contractValidity && (
            <p>
              Contract {run.contractValidity.valid ? "holds" : "broken"}
              {run.contractValidity.breakingChanges.length > 0 &&
                `: ${run.contractValidity.breakingChanges.map((b) => b.message).join("; ")}`}
            </p>
          )}
          <DataTable label="Evaluation results" columns={["Case", ...targets, "Change"]}>
            {run.results.map((r) => (
              <tr key={r.caseId}>
                <td>{cases?.find((c) => c.id === r.caseId)?.name || r.caseId}</td>
                {targets.map((t) => (
                  <td key={t}>
                    {r.byTarget[t]?.outcome ?? "—"}
                    {r.byTarget[t]?.runId && (
                      <>
                        {" "}
                        <Link to={`/runs/${r.byTarget[t]?.runId}`} navigate={navigate}>
                          run
                        </Link>
                      </>
                    )}
                  </td>
                ))}
                <td>{r.change ?? "—"}</td>
              </tr>
            ))}
          </DataTable>
        </article>
      )}
    </section>
  );
}
