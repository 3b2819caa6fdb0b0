import type { ProviderConnection, ProviderConnectionTest, RequestBody } from "@kiln/sdk";
import { useCallback, useId, useState } from "react";
import { useAction, useLoaded } from "./action.js";
import { call } from "./api.js";
import { ConfirmButton } from "./confirm.js";
import { perMillion } from "./model-picker.js";
import { Listed } from "./resource-list.js";
import { DataTable, ErrorBox, Field, SelectField } from "./ui.js";

type Provider = RequestBody<"createProviderConnection">["provider"];
/** Every kind the API takes, checked both ways against its document (a Record over the union). */
const PROVIDERS: Record<Provider, string> = {
  openai: "OpenAI",
  openai_compatible: "OpenAI-compatible (Ollama, vLLM, OpenRouter, Groq…)",
  azure_openai: "Azure OpenAI",
  anthropic: "Anthropic",
  gemini: "Google Gemini",
  bedrock: "AWS Bedrock",
};

/**
 * Well-known OpenAI-compatible endpoints: choosing one fills the kind, the base URL and the
 * settings it needs (the vendors' documented base URLs; local servers at their default ports).
 * Whether an endpoint knows the developer role is the vendor's: those that do not get system.
 */
const PRESETS: Record<string, { label: string; baseUrl: string; developerRole: boolean; name: string }> = {
  openrouter: {
    label: "OpenRouter",
    baseUrl: "https://openrouter.ai/api/v1",
    developerRole: false,
    name: "openrouter",
  },
  groq: { label: "Groq", baseUrl: "https://api.groq.com/openai/v1", developerRole: false, name: "groq" },
  mistral: { label: "Mistral", baseUrl: "https://api.mistral.ai/v1", developerRole: false, name: "mistral" },
  together: { label: "Together AI", baseUrl: "https://api.together.xyz/v1", developerRole: false, name: "together" },
  deepseek: { label: "DeepSeek", baseUrl: "https://api.deepseek.com/v1", developerRole: false, name: "deepseek" },
  ollama: { label: "Ollama (local)", baseUrl: "http://localhost:11434/v1", developerRole: false, name: "ollama" },
  vllm: { label: "vLLM (local)", baseUrl: "http://localhost:8000/v1", developerRole: false, name: "vllm" },
};

/** One row of the models a connection offers, as typed: prices are text until sent. */
interface ModelRow {
  /** Stable across edits and removals (React's key). */
  key: number;
  model: string;
  input: string;
  output: string;
}

let rowKeys = 0;
const emptyRow = (): ModelRow => ({ key: ++rowKeys, model: "", input: "", output: "" });

const price = (text: string): number | undefined => (text.trim() === "" ? undefined : Number(text));

/**
 * The organization's provider connections (docs/providers.md "Connections"): each with its kind,
 * endpoint, key hint and models; tested with one cheap call, deleted after a question; a form adds
 * one. The key goes in and is never shown again (only its last four characters).
 */
export function Connections({ organizationId, onChanged }: { organizationId: string; onChanged: () => void }) {
  const { error, setError, act } = useAction();
  const read = useCallback(
    async () =>
      (await call<{ data: ProviderConnection[] }>("GET", `/api/provider-connections?organizationId=${organizationId}`))
        .data,
    [organizationId],
  );
  const { value: connections, reload } = useLoaded(read, setError);
  const [tests, setTests] = useState<Record<string, ProviderConnectionTest>>({});
  const changed = () => {
    reload();
    onChanged();
  };
  const test = async (c: ProviderConnection) => {
    const outcome = await call<ProviderConnectionTest>("POST", `/api/provider-connections/${c.id}/test`);
    setTests((t) => ({ ...t, [c.id]: outcome }));
  };
  /** The models the provider listed and the connection lacks, added (unpriced until given prices). */
  const addListed = async (c: ProviderConnection, listed: string[]) => {
    const kept = c.models.map((m) => ({
      model: m.model,
      ...(m.inputPerMTokUsd !== null && { inputPerMTokUsd: m.inputPerMTokUsd }),
      ...(m.outputPerMTokUsd !== null && { outputPerMTokUsd: m.outputPerMTokUsd }),
      ...(m.cachedInputPerMTokUsd !== null && { cachedInputPerMTokUsd: m.cachedInputPerMTokUsd }),
      ...(m.cacheWritePerMTokUsd !== null && { cacheWritePerMTokUsd: m.cacheWritePerMTokUsd }),
      ...(m.reasoningPerMTokUsd !== null && { reasoningPerMTokUsd: m.reasoningPerMTokUsd }),
      capabilities: m.capabilities,
    }));
    const known = new Set(c.models.map((m) => m.model));
    const models = [...kept, ...listed.filter((m) => !known.has(m)).map((model) => ({ model }))];
    await call("PATCH", `/api/provider-connections/${c.id}`, { models });
    changed();
  };
  const remove = async (c: ProviderConnection) => {
    await call("DELETE", `/api/provider-connections/${c.id}`);
    changed();
  };
  return (
    <section aria-labelledby="connections">
      <h2 id="connections">Connections</h2>
      <p className="hint">
        Your organization's own providers and keys. Their models are named <code>connection/model</code> and only your
        organization sees them.
      </p>
      <ErrorBox error={error} />
      <Listed items={connections} what="connections" empty="No connection yet: add one below.">
        {(list) => (
          <DataTable label="Provider connections" columns={["Name", "Provider", "Endpoint", "Key", "Models", "Check"]}>
            {list.map((c) => (
              <tr key={c.id}>
                <td>{c.name}</td>
                <td>{PROVIDERS[c.provider]}</td>
                <td className="wrap">{c.baseUrl ?? "the provider's"}</td>
                <td>{c.apiKeyHint ?? (c.hasSecretAccessKey ? "secret access key" : "none")}</td>
                <td>
                  {c.models.length === 0
                    ? "none listed"
                    : c.models.map((m) => (
                        <span key={m.id} className="chip" title={`${perMillion(m.inputPerMTokUsd)} in`}>
                          {m.id}
                        </span>
                      ))}
                </td>
                <td>
                  <div className="actions">
                    <button type="button" className="secondary" onClick={() => act(() => test(c))}>
                      Test {c.name}
                    </button>
                    <ConfirmButton
                      act={act}
                      run={() => remove(c)}
                      className="secondary"
                      question={`Delete ${c.name}? Versions and routes naming its models fail to run from now on.`}
                      confirmLabel={`Yes, delete ${c.name}`}
                      danger
                    >
                      Delete {c.name}
                    </ConfirmButton>
                  </div>
                  <TestOutcome
                    outcome={tests[c.id]}
                    missing={(tests[c.id]?.models ?? []).filter((m) => !c.models.some((x) => x.model === m))}
                    onAdd={(listed) => act(() => addListed(c, listed))}
                  />
                </td>
              </tr>
            ))}
          </DataTable>
        )}
      </Listed>
      <NewConnection organizationId={organizationId} onCreated={changed} />
    </section>
  );
}

/** What a connection's test answered: reachable (with what it lists) or the provider's error. */
function TestOutcome({
  outcome,
  missing,
  onAdd,
}: {
  outcome: ProviderConnectionTest | undefined;
  missing: string[];
  onAdd: (models: string[]) => void;
}) {
  if (!outcome) return null;
  return (
    <>
      <p role="status" className={outcome.ok ? "hint" : "issue"}>
        {outcome.ok
          ? `Reachable in ${outcome.latencyMs} ms${outcome.models ? `; it lists ${outcome.models.length} models` : ""}.`
          : `Failed after ${outcome.latencyMs} ms: ${outcome.error?.message ?? "no answer"} (${outcome.error?.code ?? "error"}).`}
      </p>
      {outcome.ok && missing.length > 0 && (
        <button type="button" className="secondary" onClick={() => onAdd(missing)}>
          Add the {missing.length} listed model{missing.length === 1 ? "" : "s"} it lacks
        </button>
      )}
    </>
  );
}

/** The form that adds a connection: kind, name, key, endpoint and the models with their prices. */
function NewConnection({ organizationId, onCreated }: { organizationId: string; onCreated: () => void }) {
  const id = useId();
  const { error, submit, edited } = useAction();
  const [provider, setProvider] = useState<Provider>("openai_compatible");
  const [preset, setPreset] = useState("");
  const choosePreset = (key: string) => {
    setPreset(key);
    const p = PRESETS[key];
    if (!p) return;
    setProvider("openai_compatible");
    setBaseUrl(p.baseUrl);
    setName((n) => n || p.name);
  };
  const [name, setName] = useState("");
  const [apiKey, setApiKey] = useState("");
  const [baseUrl, setBaseUrl] = useState("");
  const [rows, setRows] = useState<ModelRow[]>(() => [emptyRow()]);
  const create = submit(async () => {
    const models = rows
      .filter((r) => r.model.trim() !== "")
      .map((r) => ({ model: r.model.trim(), inputPerMTokUsd: price(r.input), outputPerMTokUsd: price(r.output) }));
    const body: RequestBody<"createProviderConnection"> = {
      organizationId,
      name,
      provider,
      ...(apiKey && { apiKey }),
      ...(baseUrl && { baseUrl }),
      ...(provider === "openai_compatible" && PRESETS[preset] && { developerRole: PRESETS[preset].developerRole }),
      models,
    };
    await call("POST", "/api/provider-connections", body);
    setName("");
    setApiKey("");
    setBaseUrl("");
    setPreset("");
    setRows([emptyRow()]);
    onCreated();
  });
  const setRow = (at: number, change: Partial<ModelRow>) =>
    setRows((all) => all.map((r, i) => (i === at ? { ...r, ...change } : r)));
  return (
    <form className="card" onSubmit={create} noValidate aria-labelledby={`${id}-title`}>
      <h3 id={`${id}-title`}>Add a connection</h3>
      <SelectField id={`${id}-preset`} label="Start from" value={preset} onChange={choosePreset}>
        <option value="">(no preset)</option>
        {Object.entries(PRESETS).map(([value, p]) => (
          <option key={value} value={value}>
            {p.label}
          </option>
        ))}
      </SelectField>
      <SelectField id={`${id}-provider`} label="Provider" value={provider} onChange={(v) => setProvider(v as Provider)}>
        {Object.entries(PROVIDERS).map(([value, label]) => (
          <option key={value} value={value}>
            {label}
          </option>
        ))}
      </SelectField>
      <Field
        label="Connection name"
        value={name}
        onChange={(v) => {
          setName(v);
          edited("name");
        }}
        issue={error?.fields.name}
        required
      />
      <Field
        label="API key"
        type="password"
        autoComplete="off"
        value={apiKey}
        onChange={setApiKey}
        issue={error?.fields.apiKey}
      />
      <Field label="Base URL" value={baseUrl} onChange={setBaseUrl} issue={error?.fields.baseUrl} />
      <fieldset>
        <legend>Models and prices (USD per million tokens)</legend>
        {rows.map((r, i) => (
          <ModelRowFields key={r.key} row={r} at={i} onChange={(change) => setRow(i, change)} />
        ))}
        <button type="button" className="secondary" onClick={() => setRows((all) => [...all, emptyRow()])}>
          Add a model
        </button>
      </fieldset>
      <ErrorBox error={error} shownFields={["name", "apiKey", "baseUrl"]} />
      <button type="submit">Add connection</button>
    </form>
  );
}

function ModelRowFields({
  row,
  at,
  onChange,
}: {
  row: ModelRow;
  at: number;
  onChange: (c: Partial<ModelRow>) => void;
}) {
  const n = at + 1;
  return (
    <div className="price-row">
      <Field label={`Model ${n}`} value={row.model} onChange={(model) => onChange({ model })} />
      <Field label={`Model ${n} input price`} value={row.input} onChange={(input) => onChange({ input })} />
      <Field label={`Model ${n} output price`} value={row.output} onChange={(output) => onChange({ output })} />
    </div>
  );
}
