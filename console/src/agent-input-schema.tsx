import { useId, useState } from "react";
import { IssueText, Pick, type ShownIssue } from "./agent-builder-fields.js";
import { Field } from "./ui.js";
import { type Schema, schemaWith, specsOf, type VariableSpec } from "./variables.js";
import { VariableTypeOptions } from "./variables-editor.js";

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The workflow's inputs as a form (the rows of variables.ts, as the prompt editor's variables):
 * one group per field with its type, whether it is required and a description; fields added by
 * name and removed. A field of another type keeps what the form does not show.
 */
export function InputSchemaEditor({
  schema,
  onChange,
  issues,
}: {
  schema: Schema;
  onChange: (schema: Schema) => void;
  issues: ShownIssue[];
}) {
  const id = useId();
  const [name, setName] = useState("");
  const specs = specsOf(schema);
  const write = (next: VariableSpec[]) => onChange(schemaWith(schema, next));
  const change = (field: string, patch: Partial<VariableSpec>) =>
    write(specs.map((s) => (s.name === field ? { ...s, ...patch } : s)));
  const trimmed = name.trim();
  const nameIssue =
    trimmed === ""
      ? undefined
      : !NAME.test(trimmed)
        ? "must start with a letter or _ and hold only letters, digits or _"
        : specs.some((s) => s.name === trimmed)
          ? "is already an input"
          : undefined;
  const add = () => {
    if (trimmed === "" || nameIssue) return;
    write([...specs, { name: trimmed, type: "string", required: true, description: "", rest: {} }]);
    setName("");
  };
  return (
    <section className="card" aria-labelledby={`${id}-h`}>
      <h3 id={`${id}-h`}>Inputs</h3>
      <p className="hint">What a run of the agent is given; steps read them as “a workflow input”.</p>
      <IssueText issues={issues} />
      {specs.length === 0 && <p className="empty">No input yet: add one below.</p>}
      <div className="wf-input-fields">
        {specs.map((spec) => (
          <fieldset key={spec.name} className="variable">
            <legend>{spec.name}</legend>
            <Pick
              label={`Type of ${spec.name}`}
              value={spec.type}
              onChange={(type) => change(spec.name, { type: type as VariableSpec["type"] })}
            >
              <VariableTypeOptions type={spec.type} />
            </Pick>
            <label className="check">
              <input
                type="checkbox"
                checked={spec.required}
                onChange={(e) => change(spec.name, { required: e.target.checked })}
              />{" "}
              Required
            </label>
            <Field
              label={`Description of ${spec.name}`}
              value={spec.description}
              onChange={(description) => change(spec.name, { description })}
            />
            <button
              type="button"
              className="secondary"
              onClick={() => write(specs.filter((s) => s.name !== spec.name))}
            >
              Remove input {spec.name}
            </button>
          </fieldset>
        ))}
      </div>
      <div className="wf-add">
        <Field label="New input name" value={name} onChange={setName} issue={nameIssue} />
        <button type="button" onClick={add} disabled={trimmed === "" || nameIssue !== undefined}>
          Add input
        </button>
      </div>
    </section>
  );
}
