import { useId } from "react";
import { Field, SelectField } from "./ui.js";
import {
  type Detected,
  renderPreview,
  type Schema,
  schemaWith,
  VARIABLE_TYPES,
  type VariableSpec,
  type VariableType,
} from "./variables.js";

/** What the editor works from: the template's variables, the schema as typed and as it will be saved. */
export interface VariablesState {
  detected: Detected[];
  templateError?: string;
  /** What is wrong with the JSON as typed. */
  issue?: string;
  /** The schema as typed (undefined while it is not a JSON object schema). */
  typed?: Schema;
  /** The rows: the typed schema's, then one scaffolded for each detected variable it lacks. */
  specs: VariableSpec[];
}

const json = (value: unknown) => JSON.stringify(value, null, 2);

/**
 * The variables schema, scaffolded from the template: edited as a form (a group per variable) or
 * as JSON; every variable has a sample value the preview renders with.
 */
export function VariablesEditor({
  state,
  text,
  onText,
  asJson,
  onAsJson,
  samples,
  onSamples,
}: {
  state: VariablesState;
  text: string;
  onText: (text: string) => void;
  asJson: boolean;
  onAsJson: (asJson: boolean) => void;
  samples: Record<string, string>;
  onSamples: (samples: Record<string, string>) => void;
}) {
  const id = useId();
  const { detected, specs, typed, issue } = state;
  const used = new Set(detected.map((d) => d.name));
  const write = (next: VariableSpec[]) => typed && onText(json(schemaWith(typed, next)));
  const change = (name: string, patch: Partial<VariableSpec>) =>
    write(specs.map((s) => (s.name === name ? { ...s, ...patch } : s)));
  const undeclared = typed ? specs.filter((s) => !Object.hasOwn(typed.properties ?? {}, s.name)) : [];
  return (
    <section aria-labelledby="variables-heading" className="variables">
      <h3 id="variables-heading">Variables</h3>
      <p className="hint">
        {detected.length === 0
          ? "Write {{name}} in a prompt to add a variable."
          : `From the template: ${detected.map((d) => d.name).join(", ")}.`}{" "}
        A required text variable refuses an empty value.
      </p>
      <fieldset className="segmented">
        <legend>Edit the variables schema</legend>
        {(["form", "json"] as const).map((mode) => (
          <label key={mode} className="check inline">
            <input
              type="radio"
              name={`${id}-mode`}
              checked={(mode === "json") === asJson}
              disabled={mode === "form" && issue !== undefined}
              onChange={() => {
                // The form's rows become the JSON's properties (scaffolded ones included).
                if (mode === "json" && typed) onText(json(schemaWith(typed, specs)));
                onAsJson(mode === "json");
              }}
            />{" "}
            {mode === "json" ? "as JSON" : "as a form"}
          </label>
        ))}
      </fieldset>
      {asJson ? (
        <>
          <Field
            label="Variables schema (JSON Schema)"
            multiline
            rows={8}
            value={text}
            onChange={onText}
            issue={issue}
          />
          {undeclared.length > 0 && (
            <p className="hint">Added on save, from the template: {undeclared.map((s) => s.name).join(", ")}.</p>
          )}
        </>
      ) : (
        specs.map((spec) => (
          <VariableForm
            key={spec.name}
            spec={spec}
            used={used.has(spec.name)}
            sample={samples[spec.name] ?? ""}
            onSample={(value) => onSamples({ ...samples, [spec.name]: value })}
            onChange={(patch) => change(spec.name, patch)}
            onRemove={() => write(specs.filter((s) => s.name !== spec.name))}
          />
        ))
      )}
    </section>
  );
}

function VariableForm({
  spec,
  used,
  sample,
  onSample,
  onChange,
  onRemove,
}: {
  spec: VariableSpec;
  used: boolean;
  sample: string;
  onSample: (value: string) => void;
  onChange: (patch: Partial<VariableSpec>) => void;
  onRemove: () => void;
}) {
  const id = useId();
  return (
    <fieldset className="variable">
      <legend>{spec.name}</legend>
      <SelectField
        id={`${id}-type`}
        label="Type"
        value={spec.type}
        onChange={(type) => onChange({ type: type as VariableType })}
      >
        <VariableTypeOptions type={spec.type} />
      </SelectField>
      <label className="check">
        <input type="checkbox" checked={spec.required} onChange={(e) => onChange({ required: e.target.checked })} />{" "}
        Required
      </label>
      <Field label="Description" value={spec.description} onChange={(description) => onChange({ description })} />
      <Field label="Sample value" value={sample} onChange={onSample} />
      {!used && (
        <p className="hint">
          Not in the template.{" "}
          <button type="button" className="secondary" onClick={onRemove}>
            Remove {spec.name}
          </button>
        </p>
      )}
    </fieldset>
  );
}

/** The prompt rendered as a run renders it, with the sample values (marked); a variable without one shows as {{name}}. */
export function SampledPreview({
  template,
  specs,
  samples,
  label,
}: {
  template: string;
  specs: VariableSpec[];
  samples: Record<string, string>;
  label: string;
}) {
  if (template === "") return null;
  return (
    <div className="template" role="note" aria-label={label}>
      {renderPreview(template, specs, samples).map((part, i) =>
        part.variable ? (
          // biome-ignore lint/suspicious/noArrayIndexKey: the parts of one string, in order
          <mark key={i}>{part.text}</mark>
        ) : (
          // biome-ignore lint/suspicious/noArrayIndexKey: the parts of one string, in order
          <span key={i}>{part.text}</span>
        ),
      )}
    </div>
  );
}

/** The options of a variable's type picker ("other" only for a type the form cannot edit). */
export function VariableTypeOptions({ type }: { type: string }) {
  return (
    <>
      {VARIABLE_TYPES.map((t) => (
        <option key={t} value={t}>
          {t === "string" ? "text" : t}
        </option>
      ))}
      {type === "other" && <option value="other">other (edit as JSON)</option>}
    </>
  );
}
