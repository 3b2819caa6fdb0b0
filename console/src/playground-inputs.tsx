import type { ShownError } from "./api.js";
import { Field, SelectField } from "./ui.js";

/** A field the variables (or input) schema asks for: one of its top-level properties. */
export interface Property {
  name: string;
  type: string;
  required: boolean;
  description: string;
  choices: string[] | null;
}

/** The form fields a variables schema asks for (its top-level properties, required ones first). */
export function propertiesOf(schema: unknown): Property[] {
  const s = (schema ?? {}) as {
    properties?: Record<string, { type?: unknown; description?: unknown; enum?: unknown }>;
    required?: string[];
  };
  const all = Object.entries(s.properties ?? {}).map(([name, p]) => ({
    name,
    type: typeof p?.type === "string" ? p.type : "string",
    required: (s.required ?? []).includes(name),
    description: typeof p?.description === "string" ? p.description : "",
    choices: Array.isArray(p?.enum) ? p.enum.map(String) : null,
  }));
  return [...all.filter((p) => p.required), ...all.filter((p) => !p.required)];
}

function typedValue(p: Property, text: string): unknown {
  if (p.type === "number" || p.type === "integer") return text === "" ? undefined : Number(text);
  if (p.type === "boolean") return text === "" ? undefined : text === "true";
  if (p.type === "object" || p.type === "array") {
    if (text.trim() === "") return undefined;
    try {
      return JSON.parse(text);
    } catch {
      throw {
        message: `${p.name} is not JSON`,
        fields: { [`variables.${p.name}`]: "is not JSON" },
      } satisfies ShownError;
    }
  }
  return text;
}

/**
 * The variables as the API takes them: typed by the schema; an empty optional field left out, an
 * empty required one refused here (an empty string is not a value a person means to send).
 */
export function variablesOf(properties: Property[], values: Record<string, string>): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  const missing: Record<string, string> = {};
  for (const p of properties) {
    const text = values[p.name] ?? "";
    if (text.trim() === "" && p.required) missing[`variables.${p.name}`] = "is required";
    const v = typedValue(p, text);
    if (v !== undefined && v !== "") fields[p.name] = v;
  }
  if (Object.keys(missing).length > 0) throw { message: "Fill in the required variables.", fields: missing };
  return fields;
}

/** The variables form: one field per property of the schema, typed as it says. */
export function VariableFields({
  properties,
  values,
  setValues,
  error,
}: {
  properties: Property[];
  values: Record<string, string>;
  /** The values' state setter: a field's change is merged into them. */
  setValues: (update: (values: Record<string, string>) => Record<string, string>) => void;
  error: ShownError | null;
}) {
  const onChange = (name: string, value: string) => setValues((vs) => ({ ...vs, [name]: value }));
  if (properties.length === 0) return <p className="hint">This version takes no variables.</p>;
  return properties.map((p) => {
    const label = `${p.name}${p.required ? " (required)" : ""}`;
    const value = values[p.name] ?? "";
    const issue = error?.fields[`variables.${p.name}`] ?? error?.fields[`input.${p.name}`];
    if (p.type === "boolean" || p.choices) {
      const choices = p.choices ?? ["true", "false"];
      return (
        <div key={p.name}>
          <SelectField id={`variable-${p.name}`} label={label} value={value} onChange={(v) => onChange(p.name, v)}>
            <option value="">{p.required ? "choose…" : "not set"}</option>
            {choices.map((c) => (
              <option key={c} value={c}>
                {c}
              </option>
            ))}
          </SelectField>
          {issue && <span className="issue">{issue}</span>}
        </div>
      );
    }
    const structured = p.type === "object" || p.type === "array";
    return (
      <Field
        key={p.name}
        label={structured ? `${label} (JSON)` : label}
        type={p.type === "number" || p.type === "integer" ? "number" : "text"}
        multiline={structured}
        rows={3}
        value={value}
        onChange={(v) => onChange(p.name, v)}
        issue={issue}
      />
    );
  });
}
