/** A skill's evaluation cases: a form to add and edit (input, expected output, assertions), delete, files in and out. */
import type { EvaluationCase, Kiln, NewEvaluationCase } from "@kiln/sdk";
import { type ChangeEvent, Fragment, useCallback, useState } from "react";
import { useAction, useLoaded } from "./action.js";
import type { Session } from "./api.js";
import { type AssertionDraft, AssertionsEditor, assertionsOf, draftOf } from "./evaluation-assertions.js";
import { casesOf, casesToCsv, casesToJsonl, download } from "./evaluation-case-files.js";
import { parseObject } from "./json-input.js";
import { propertiesOf, VariableFields, variablesOf } from "./playground-inputs.js";
import { DataTable, Empty, ErrorBox, Field, Loading } from "./ui.js";

/** The API's batch limit (api.md "Evaluations": 1–500 cases a request). */
const BATCH = 500;

const caseTitle = (c: EvaluationCase, i: number) => c.name || `case ${i + 1}`;
const textOf = (v: unknown) => (typeof v === "string" ? v : JSON.stringify(v));

/** Every case of the skill, oldest first (the order of the reports), read page after page. */
export async function allCases(kiln: Kiln, skillId: string): Promise<EvaluationCase[]> {
  const cases: EvaluationCase[] = [];
  for await (const c of kiln.evaluations.listCases(skillId, { limit: 200 })) cases.push(c);
  return cases.reverse();
}

export function EvaluationCases({
  kiln,
  session,
  skillId,
  inputSchema,
  onCases,
}: {
  kiln: Kiln;
  session: Session;
  skillId: string;
  inputSchema: unknown;
  onCases: (cases: EvaluationCase[]) => void;
}) {
  const properties = propertiesOf(inputSchema);
  const [name, setName] = useState("");
  const [values, setValues] = useState<Record<string, string>>({});
  const [inputJson, setInputJson] = useState("{}");
  const [expected, setExpected] = useState("");
  const [assertions, setAssertions] = useState<AssertionDraft[]>([]);
  const [editing, setEditing] = useState<EvaluationCase | null>(null);
  const [deleting, setDeleting] = useState<string | null>(null);
  const [note, setNote] = useState("");
  const { error, setError, act, submit, busy } = useAction();
  const read = useCallback(async () => {
    const cases = await allCases(kiln, skillId);
    onCases(cases);
    return cases;
  }, [kiln, skillId, onCases]);
  const { value: cases, reload } = useLoaded<EvaluationCase[]>(read, setError);
  const organizationId = session.organizationId;

  const clear = () => {
    setEditing(null);
    setName("");
    setValues({});
    setInputJson("{}");
    setExpected("");
    setAssertions([]);
  };
  const edit = (c: EvaluationCase) => {
    setEditing(c);
    setName(c.name);
    const input = c.input as Record<string, unknown>;
    setValues(Object.fromEntries(Object.entries(input).map(([k, v]) => [k, textOf(v)])));
    setInputJson(JSON.stringify(c.input, null, 1));
    setExpected(c.expectedOutput === null ? "" : textOf(c.expectedOutput));
    setAssertions(c.assertions.map(draftOf));
    scrollTo(0, document.getElementById("case-form")?.offsetTop ?? 0);
  };
  const save = submit(async () => {
    const input = properties.length > 0 ? variablesOf(properties, values) : parseObject(inputJson, "The case input");
    let expectedOutput: unknown = null;
    if (expected.trim() !== "") {
      try {
        expectedOutput = JSON.parse(expected);
      } catch {
        expectedOutput = expected;
      }
    }
    const content = { name, input, expectedOutput, assertions: assertionsOf(assertions) };
    if (editing) await kiln.evaluations.updateCase(skillId, editing.id, { organizationId, ...content });
    else await kiln.evaluations.createCases(skillId, { organizationId, cases: [content] });
    setNote(editing ? `Saved ${name || "the case"}.` : `Added ${name || "a case"}.`);
    clear();
    reload();
  });
  const remove = (c: EvaluationCase, title: string) =>
    act(async () => {
      await kiln.evaluations.deleteCase(skillId, c.id);
      setDeleting(null);
      if (editing?.id === c.id) clear();
      setNote(`Deleted ${title}.`);
      reload();
    });
  async function importFile(event: ChangeEvent<HTMLInputElement>) {
    const file = event.target.files?.[0];
    event.target.value = "";
    if (!file) return;
    await act(async () => {
      let parsed: NewEvaluationCase[];
      try {
        parsed = casesOf(await file.text());
      } catch (e) {
        throw { message: `${file.name}: ${e instanceof Error ? e.message : String(e)}`, fields: {} };
      }
      for (let i = 0; i < parsed.length; i += BATCH) {
        await kiln.evaluations.createCases(skillId, { organizationId, cases: parsed.slice(i, i + BATCH) });
      }
      setNote(`Imported ${parsed.length} case${parsed.length === 1 ? "" : "s"} from ${file.name}.`);
      reload();
    });
  }

  return (
    <section aria-labelledby="cases-heading" className="eval-cases">
      <h3 id="cases-heading">Cases</h3>
      <ErrorBox error={error} />
      {note && <p role="status">{note}</p>}
      {cases === null ? (
        <Loading what="cases" />
      ) : cases.length === 0 ? (
        <Empty>No case yet: add one below or import a file.</Empty>
      ) : (
        <DataTable label="Cases" columns={["Case", "Input", "Expected output", "Assertions", "Actions"]}>
          {cases.map((c, i) => {
            const title = caseTitle(c, i);
            return (
              <tr key={c.id} className={editing?.id === c.id ? "editing" : undefined}>
                <td>{title}</td>
                <td>
                  <code>{JSON.stringify(c.input)}</code>
                </td>
                <td>{c.expectedOutput === null ? "—" : <code>{textOf(c.expectedOutput)}</code>}</td>
                <td>{c.assertions.map((a) => a.type.replace(/_/g, " ")).join(", ") || "—"}</td>
                <td className="nowrap">
                  <button type="button" className="secondary" onClick={() => edit(c)}>
                    Edit {title}
                  </button>{" "}
                  {deleting === c.id ? (
                    <button type="button" className="danger" disabled={busy} onClick={() => remove(c, title)}>
                      Confirm: delete {title}
                    </button>
                  ) : (
                    <button type="button" className="secondary" onClick={() => setDeleting(c.id)}>
                      Delete {title}
                    </button>
                  )}
                </td>
              </tr>
            );
          })}
        </DataTable>
      )}
      <div className="columns">
        <form className="card" id="case-form" onSubmit={save}>
          <h4>{editing ? `Edit the case ${editing.name}` : "Add a case"}</h4>
          <Field label="Case name" value={name} onChange={setName} />
          {properties.length > 0 ? (
            <fieldset className="variables">
              <legend>Input</legend>
              <VariableFields properties={properties} values={values} setValues={setValues} error={error} />
            </fieldset>
          ) : (
            <Field label="Case input (JSON)" multiline rows={3} value={inputJson} onChange={setInputJson} />
          )}
          <Field label="Expected output (optional: text or JSON)" value={expected} onChange={setExpected} />
          <AssertionsEditor drafts={assertions} onChange={setAssertions} />
          <p>
            <button type="submit" disabled={busy}>
              {editing ? "Save case" : "Add case"}
            </button>{" "}
            {editing && (
              <button type="button" className="secondary" onClick={clear}>
                Cancel editing
              </button>
            )}
          </p>
        </form>
        <div className="card">
          <h4>Files</h4>
          <label className="field">
            Import cases (JSON, JSONL or CSV)
            <input type="file" accept=".json,.jsonl,.csv,application/json,text/csv" onChange={importFile} />
          </label>
          <p className="hint">
            CSV columns: name, input.&lt;field&gt;…, expectedOutput, contains. JSON and JSONL keep every assertion.
          </p>
          <p>
            {(
              [
                ["JSONL", "jsonl", casesToJsonl, "application/x-ndjson"],
                ["CSV", "csv", casesToCsv, "text/csv"],
              ] as const
            ).map(([label, extension, write, type]) => (
              <Fragment key={label}>
                <button
                  type="button"
                  className="secondary"
                  disabled={!cases?.length}
                  onClick={() => download(`cases-${skillId}.${extension}`, write(cases ?? []), type)}
                >
                  Export {label}
                </button>{" "}
              </Fragment>
            ))}
          </p>
        </div>
      </div>
    </section>
  );
}
