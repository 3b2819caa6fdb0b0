import type {
  EvaluationCase,
  EvaluationRun,
  Kiln,
  NewEvaluationCase,
  Prompt,
  Skill,
  SkillPreview,
  Tool,
  VersionDiff,
} from "@kiln/sdk";
import Papa from "papaparse";
import { type FormEvent, useCallback, useEffect, useState } from "react";
import { errorOf, type Session, type ShownError } from "./api.js";
import { type FamilyList, ResourceList } from "./resource-list.js";
import type { Navigate } from "./router.js";
import { DiffTable, Empty, ErrorBox, Field, Link, Loading, TableWrap, ToolPicker } from "./ui.js";

function parseObject(text: string, what: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw { message: `${what} is not JSON: ${(e as Error).message}`, fields: {} } satisfies ShownError;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw { message: `${what} must be a JSON object`, fields: {} } satisfies ShownError;
  return value as Record<string, unknown>;
}

/** Skills of the organization: list, create, open. */
export const skillList: FamilyList<Skill> = {
  client: (kiln) => kiln.skills,
  noun: "skill",
  plural: "skills",
  path: "/skills",
  nameLabel: "Skill name",
  emptyText: "No skill yet: compose one from published prompts.",
};

export function SkillList(props: { kiln: Kiln; session: Session; navigate: Navigate }) {
  return <ResourceList family={skillList} {...props} />;
}

/** One skill: the composition editor, preview, publish, run, and its evaluations. */
export function SkillDetail({
  kiln,
  session,
  id,
  navigate,
}: {
  kiln: Kiln;
  session: Session;
  id: string;
  navigate: Navigate;
}) {
  const [skill, setSkill] = useState<Skill | null>(null);
  const [prompts, setPrompts] = useState<Prompt[]>([]);
  const [adding, setAdding] = useState("");
  const [bindings, setBindings] = useState("");
  const [tools, setTools] = useState<Tool[]>([]);
  const [input, setInput] = useState("{}");
  const [preview, setPreview] = useState<SkillPreview | null>(null);
  const [error, setError] = useState<ShownError | null>(null);
  const load = useCallback(() => {
    kiln.skills
      .get(id)
      .then(setSkill)
      .catch((e) => setError(errorOf(e)));
  }, [kiln, id]);
  useEffect(load, [load]);
  useEffect(() => {
    kiln.prompts
      .list({ organizationId: session.organizationId, limit: 200 })
      .then((page) => {
        const published = page.data.filter((p) => p.publishedVersionId);
        setPrompts(published);
        setAdding((a) => a || published[0]?.id || "");
      })
      .catch((e) => setError(errorOf(e)));
    kiln.tools
      .list({ organizationId: session.organizationId, limit: 200 })
      .then((page) => setTools(page.data))
      .catch((e) => setError(errorOf(e)));
  }, [kiln, session.organizationId]);
  const act = async (what: () => Promise<void>) => {
    setError(null);
    try {
      await what();
    } catch (err) {
      setError(errorOf(err));
    }
  };
  if (!skill) return <main>{error ? <ErrorBox error={error} /> : <Loading what="the skill" />}</main>;
  const steps = skill.promptComposition;
  const draft = skill.draftVersionId;
  type StepInput = { promptId: string; alias: string; variables?: Record<string, unknown> };
  const kept = (s: (typeof steps)[number]): StepInput => ({
    promptId: s.promptId,
    alias: s.alias,
    variables: s.variables,
  });
  const replace = (prompts: StepInput[]) =>
    act(async () => {
      if (!draft) return;
      setSkill(await kiln.skills.replacePrompts(draft, { prompts }));
    });
  return (
    <main>
      <h1>{skill.name}</h1>
      <p>
        {draft ? "Editing the draft." : "No draft: create a new version to edit."}{" "}
        {skill.publishedVersionId ? "A version is published." : "Nothing published yet."}
      </p>
      <ErrorBox error={error} />
      <div className="columns">
        <section className="card" aria-labelledby="composition">
          <h2 id="composition">Prompt composition</h2>
          {steps.length === 0 ? (
            <Empty>No step: add a published prompt.</Empty>
          ) : (
            <ol>
              {steps.map((s) => (
                <li key={s.alias}>
                  <strong>{s.alias}</strong>: {s.promptName} version {s.version}
                  <pre className="output">{JSON.stringify(s.variables)}</pre>
                  {draft && (
                    <button
                      type="button"
                      className="secondary"
                      onClick={() => replace(steps.filter((o) => o.alias !== s.alias).map(kept))}
                    >
                      Remove {s.alias}
                    </button>
                  )}
                </li>
              ))}
            </ol>
          )}
          {draft && (
            <form
              onSubmit={(e) => {
                e.preventDefault();
                let variables: Record<string, unknown> | undefined;
                try {
                  variables = bindings.trim() === "" ? undefined : parseObject(bindings, "The bindings");
                } catch (err) {
                  setError(errorOf(err));
                  return;
                }
                void replace([
                  ...steps.map(kept),
                  { promptId: adding, alias: `step${steps.length + 1}`, ...(variables ? { variables } : {}) },
                ]);
              }}
            >
              <div className="field">
                <label htmlFor="add-prompt">Published prompt</label>
                <select id="add-prompt" value={adding} onChange={(e) => setAdding(e.target.value)}>
                  {prompts.map((p) => (
                    <option key={p.id} value={p.id}>
                      {p.name}
                    </option>
                  ))}
                </select>
              </div>
              <Field
                label='Bindings (JSON, optional: {"variable": "{{input.x}}" or "{{steps.<alias>.output}}"})'
                value={bindings}
                onChange={setBindings}
              />
              <button type="submit" disabled={!adding}>
                Add step
              </button>
            </form>
          )}
          {draft && (
            <ToolPicker
              tools={tools}
              chosen={skill.tools.map((t) => t.toolId)}
              onChange={(ids) =>
                act(async () => {
                  setSkill(await kiln.skills.replaceTools(draft, { tools: ids }));
                })
              }
              legend="Skill tools (offered to every step)"
            />
          )}
          <h3>Input schema</h3>
          <pre className="output">{JSON.stringify(skill.inputSchema, null, 2)}</pre>
          <div>
            {draft && (
              <button type="button" onClick={() => act(async () => setSkill(await kiln.skills.publish(id)))}>
                Publish the draft
              </button>
            )}{" "}
            {!draft && (
              <button
                type="button"
                className="secondary"
                onClick={() =>
                  act(async () => {
                    await kiln.skills.createVersion(id);
                    load();
                  })
                }
              >
                New version
              </button>
            )}
          </div>
        </section>
        <section className="card" aria-labelledby="try">
          <h2 id="try">Preview</h2>
          <Field label="Skill input (JSON)" multiline rows={4} value={input} onChange={setInput} />
          <button
            type="button"
            onClick={() =>
              act(async () =>
                setPreview(
                  await kiln.skills.preview(id, {
                    organizationId: session.organizationId,
                    input: parseObject(input, "The input"),
                  }),
                ),
              )
            }
          >
            Preview
          </button>
          {preview && (
            <article aria-label="Preview output" className="card">
              <p>
                {preview.status} · {preview.usage.inputTokens} in / {preview.usage.outputTokens} out tokens ·{" "}
                {preview.latencyMs} ms
              </p>
              <pre className="output">{preview.output?.text ?? preview.error?.message ?? ""}</pre>
            </article>
          )}
        </section>
      </div>
      <SkillDiff kiln={kiln} skill={skill} />
      <Evaluations kiln={kiln} session={session} skillId={id} navigate={navigate} />
    </main>
  );
}

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

/** A version of the skill against the one before it. */
function SkillDiff({ kiln, skill }: { kiln: Kiln; skill: Skill }) {
  const later = skill.versions.filter((v) => v.version > 1);
  const [picked, setVersionId] = useState("");
  // The newest version until one is picked (versions appear after this mounted).
  const versionId = picked || later.at(-1)?.id || "";
  const [diff, setDiff] = useState<VersionDiff | null>(null);
  const [error, setError] = useState<ShownError | null>(null);
  if (later.length === 0) return null;
  return (
    <section className="card" aria-labelledby="skill-diff">
      <h2 id="skill-diff">Version diff</h2>
      <div className="field">
        <label htmlFor="skill-diff-version">Version (against the one before)</label>
        <select id="skill-diff-version" value={versionId} onChange={(e) => setVersionId(e.target.value)}>
          {later.map((v) => (
            <option key={v.id} value={v.id}>
              Version {v.version}
            </option>
          ))}
        </select>
      </div>
      <button
        type="button"
        onClick={() =>
          kiln.skills
            .diff(skill.id, versionId)
            .then(setDiff)
            .catch((e) => setError(errorOf(e)))
        }
      >
        Show diff
      </button>
      <ErrorBox error={error} />
      {diff && <DiffTable label="Skill version diff" changes={diff.changes} />}
    </section>
  );
}

/** Cases (add, import JSON or CSV), a run against draft and/or published, the summary and per-case table. */
function Evaluations({
  kiln,
  session,
  skillId,
  navigate,
}: {
  kiln: Kiln;
  session: Session;
  skillId: string;
  navigate: Navigate;
}) {
  const [cases, setCases] = useState<EvaluationCase[] | null>(null);
  const [caseInput, setCaseInput] = useState("{}");
  const [contains, setContains] = useState("");
  const [caseName, setCaseName] = useState("");
  const [editing, setEditing] = useState<string | null>(null);
  const [imported, setImported] = useState("");
  const [run, setRun] = useState<EvaluationRun | null>(null);
  const [against, setAgainst] = useState<string[]>([]);
  const [error, setError] = useState<ShownError | null>(null);
  const load = useCallback(() => {
    kiln.evaluations
      .listCases(skillId, { limit: 200 })
      .then((page) => setCases(page.data))
      .catch((e) => setError(errorOf(e)));
  }, [kiln, skillId]);
  useEffect(load, [load]);
  const add = async (newCases: NewEvaluationCase[]) => {
    setError(null);
    try {
      await kiln.evaluations.createCases(skillId, { organizationId: session.organizationId, cases: newCases });
      load();
    } catch (err) {
      setError(errorOf(err));
    }
  };
  async function start() {
    setError(null);
    try {
      const started = await kiln.evaluations.run(skillId, {
        organizationId: session.organizationId,
        ...(against.length > 0 ? { targets: against } : {}),
      });
      let current = await kiln.evaluations.get(skillId, started.id);
      setRun(current);
      while (current.status === "queued" || current.status === "running") {
        await new Promise((r) => setTimeout(r, 300));
        current = await kiln.evaluations.get(skillId, started.id);
        setRun(current);
      }
    } catch (err) {
      setError(errorOf(err));
    }
  }
  const targets = run?.targets.map((t) => t.label) ?? [];
  return (
    <section aria-labelledby="evaluations">
      <h2 id="evaluations">Evaluations</h2>
      <ErrorBox error={error} />
      <div className="columns">
        <form
          className="card"
          onSubmit={(e) => {
            e.preventDefault();
            try {
              const input = parseObject(caseInput, "The case input");
              const content = {
                ...(caseName ? { name: caseName } : {}),
                input,
                ...(contains ? { assertions: [{ type: "contains" as const, value: contains }] } : {}),
              };
              if (editing) {
                setError(null);
                kiln.evaluations
                  .updateCase(skillId, editing, { organizationId: session.organizationId, ...content })
                  .then(() => {
                    setEditing(null);
                    load();
                  })
                  .catch((err) => setError(errorOf(err)));
              } else void add([content]);
            } catch (err) {
              setError(errorOf(err));
            }
          }}
        >
          <h3>{editing ? "Edit the case" : "Add a case"}</h3>
          <Field label="Case name" value={caseName} onChange={setCaseName} />
          <Field label="Case input (JSON)" multiline rows={3} value={caseInput} onChange={setCaseInput} />
          <Field label="Output contains" value={contains} onChange={setContains} />
          <button type="submit">{editing ? "Save case" : "Add case"}</button>
        </form>
        <form
          className="card"
          onSubmit={(e) => {
            e.preventDefault();
            try {
              void add(casesOf(imported));
            } catch (err) {
              setError(errorOf(err));
            }
          }}
        >
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
        <TableWrap label="Cases">
          <table>
            <thead>
              <tr>
                <th scope="col">Case</th>
                <th scope="col">Input</th>
                <th scope="col">Assertions</th>
                <th scope="col">Action</th>
              </tr>
            </thead>
            <tbody>
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
            </tbody>
          </table>
        </TableWrap>
      )}
      {cases === null ? (
        <Loading what="cases" />
      ) : (
        <p>
          {cases.length} case{cases.length === 1 ? "" : "s"}.{" "}
          {["draft", "published"].map((t) => (
            <label key={t} className="check inline">
              <input
                type="checkbox"
                checked={against.includes(t)}
                onChange={(e) => setAgainst((cur) => (e.target.checked ? [...cur, t] : cur.filter((x) => x !== t)))}
              />{" "}
              against {t}
            </label>
          ))}{" "}
          <button type="button" onClick={start} disabled={cases.length === 0}>
            Run evaluation
          </button>
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
          <TableWrap label="Evaluation results">
            <table>
              <thead>
                <tr>
                  <th scope="col">Case</th>
                  {targets.map((t) => (
                    <th key={t} scope="col">
                      {t}
                    </th>
                  ))}
                  <th scope="col">Change</th>
                </tr>
              </thead>
              <tbody>
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
              </tbody>
            </table>
          </TableWrap>
        </article>
      )}
    </section>
  );
}
