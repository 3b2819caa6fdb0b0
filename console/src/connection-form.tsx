import type { ProviderConnection, RequestBody } from "@kiln/sdk";
import { useEffect, useId, useRef, useState } from "react";
import { useAction } from "./action.js";
import { call } from "./api.js";
import { discovers, PRESETS, PROVIDERS, type Provider, speaksOpenAI } from "./connection-kinds.js";
import { emptyRow, type ModelRow, ModelRows, modelsOf, type RowField, rowsOf } from "./connection-models.js";
import { ErrorBox, Field, SelectField } from "./ui.js";

/** The fields beside which the form shows the API's issues (the model rows' come on top). */
const SHOWN = ["name", "apiKey", "baseUrl", "apiVersion", "region", "accessKeyId", "secretAccessKey"];
const ROW_FIELDS: RowField[] = [
  "model",
  "inputPerMTokUsd",
  "outputPerMTokUsd",
  "cachedInputPerMTokUsd",
  "cacheWritePerMTokUsd",
  "reasoningPerMTokUsd",
];
/** Azure OpenAI's api-version when the connection names none (docs/providers.md "Connections"). */
const AZURE_API_VERSION = "2024-10-21";

/**
 * The form of a connection (docs/providers.md "Connections"): without `connection` it adds one
 * (kind, name, key, endpoint, the AWS keys for Bedrock, Azure's api-version and each model's
 * deployment, the models with their prices, cached, cache-write and reasoning too; models left
 * empty are the ones the provider lists), with one it edits it in place through `PATCH`: the kind
 * and name stay, the key field starts empty and stays the stored key unless a new one is typed (a
 * new key rotates it), the models are the connection's, each editable or removable. Issues the API
 * gives are shown beside their fields, a model's beside that model's row.
 */
export function ConnectionForm({
  organizationId,
  connection,
  onSaved,
  onCancel,
}: {
  organizationId: string;
  connection?: ProviderConnection;
  onSaved: () => void;
  onCancel?: () => void;
}) {
  const id = useId();
  const form = useRef<HTMLFormElement>(null);
  const { error, submit, edited } = useAction();
  const [provider, setProvider] = useState<Provider>(connection?.provider ?? "openai_compatible");
  const [preset, setPreset] = useState("");
  const [name, setName] = useState(connection?.name ?? "");
  const [apiKey, setApiKey] = useState("");
  const [baseUrl, setBaseUrl] = useState(connection?.baseUrl ?? "");
  const [region, setRegion] = useState(connection?.region ?? "");
  const [accessKeyId, setAccessKeyId] = useState(connection?.accessKeyId ?? "");
  const [secretAccessKey, setSecretAccessKey] = useState("");
  const [apiVersion, setApiVersion] = useState(connection?.apiVersion ?? "");
  const [rows, setRows] = useState<ModelRow[]>(() =>
    connection && connection.models.length > 0 ? rowsOf(connection.models, connection.deployments) : [emptyRow()],
  );
  /** Which index of the models sent each row had: the API's issues name `models[i]`. */
  const [sent, setSent] = useState<Map<number, number>>(new Map());
  useEffect(() => {
    if (connection) form.current?.scrollIntoView?.({ block: "start" });
  }, [connection]);

  const openai = speaksOpenAI(provider);
  const bedrock = provider === "bedrock";
  const azure = provider === "azure_openai";
  const rowPath = (row: ModelRow, field: RowField) => {
    const at = sent.get(row.key);
    return at === undefined ? undefined : `models[${at}].${field}`;
  };
  const bind = (field: string, value: string, set: (v: string) => void) => ({
    value,
    onChange: (v: string) => {
      set(v);
      edited(field);
    },
    issue: error?.fields[field],
  });

  const save = submit(async () => {
    const { models, sent: positions, deployments } = modelsOf(rows, openai);
    setSent(positions);
    const aws = bedrock && {
      ...(region !== (connection?.region ?? "") && { region }),
      ...(accessKeyId !== (connection?.accessKeyId ?? "") && { accessKeyId }),
      ...(secretAccessKey && { secretAccessKey }),
    };
    const azureSettings = azure && { ...(apiVersion.trim() && { apiVersion: apiVersion.trim() }), deployments };
    if (connection) {
      const body: RequestBody<"updateProviderConnection"> = {
        ...(apiKey && { apiKey }),
        ...(baseUrl !== (connection.baseUrl ?? "") && { baseUrl: baseUrl === "" ? null : baseUrl }),
        ...aws,
        ...azureSettings,
        models,
      };
      await call("PATCH", `/api/provider-connections/${connection.id}`, body);
    } else {
      const body: RequestBody<"createProviderConnection"> = {
        organizationId,
        name,
        provider,
        ...(apiKey && { apiKey }),
        ...(baseUrl && { baseUrl }),
        ...(provider === "openai_compatible" && PRESETS[preset] && { developerRole: PRESETS[preset].developerRole }),
        ...aws,
        ...azureSettings,
        // None given: the provider's own list (docs/providers.md "Discovery").
        ...((models.length > 0 || !discovers(provider)) && { models }),
      };
      await call("POST", "/api/provider-connections", body);
      setName("");
      setPreset("");
      setBaseUrl("");
      setRegion("");
      setAccessKeyId("");
      setApiVersion("");
      setRows([emptyRow()]);
    }
    setApiKey("");
    setSecretAccessKey("");
    onSaved();
  });

  const choosePreset = (key: string) => {
    setPreset(key);
    const p = PRESETS[key];
    if (!p) return;
    setProvider("openai_compatible");
    setBaseUrl(p.baseUrl);
    setName((n) => n || p.name);
  };
  const title = connection ? `Edit ${connection.name}` : "Add a connection";
  const rowIssues = [...sent.values()].flatMap((at) => ROW_FIELDS.map((f) => `models[${at}].${f}`));
  return (
    <form ref={form} className="card" onSubmit={save} noValidate aria-labelledby={`${id}-title`}>
      <h3 id={`${id}-title`}>{title}</h3>
      {connection ? (
        <p className="hint">
          {PROVIDERS[connection.provider]}; its models are named <code>{connection.name}/model</code>.
        </p>
      ) : (
        <>
          <SelectField id={`${id}-preset`} label="Start from" value={preset} onChange={choosePreset}>
            <option value="">(no preset)</option>
            {Object.entries(PRESETS).map(([value, p]) => (
              <option key={value} value={value}>
                {p.label}
              </option>
            ))}
          </SelectField>
          <SelectField
            id={`${id}-provider`}
            label="Provider"
            value={provider}
            onChange={(v) => setProvider(v as Provider)}
          >
            {Object.entries(PROVIDERS).map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </SelectField>
          <Field label="Connection name" {...bind("name", name, setName)} required />
        </>
      )}
      {!bedrock && <Field label="API key" type="password" autoComplete="off" {...bind("apiKey", apiKey, setApiKey)} />}
      {connection?.apiKeyHint && (
        <p className="hint">
          The key ending {connection.apiKeyHint.replace("…", "")} is kept unless you type a new one.
        </p>
      )}
      <Field label="Base URL" {...bind("baseUrl", baseUrl, setBaseUrl)} />
      {azure && (
        <Field label="API version" placeholder={AZURE_API_VERSION} {...bind("apiVersion", apiVersion, setApiVersion)} />
      )}
      {bedrock && (
        <>
          <Field label="Region" {...bind("region", region, setRegion)} />
          <Field label="Access key ID" autoComplete="off" {...bind("accessKeyId", accessKeyId, setAccessKeyId)} />
          <Field
            label="Secret access key"
            type="password"
            autoComplete="off"
            {...bind("secretAccessKey", secretAccessKey, setSecretAccessKey)}
          />
          {connection?.hasSecretAccessKey && (
            <p className="hint">The stored secret is kept unless you type a new one.</p>
          )}
        </>
      )}
      <fieldset>
        <legend>Models and prices (USD per million tokens)</legend>
        {!connection && discovers(provider) && (
          <p className="hint">
            Leave the models empty to take the ones the provider lists, priced where Kiln knows them.
          </p>
        )}
        <ModelRows
          rows={rows}
          onRows={setRows}
          openai={openai}
          azure={azure}
          issueOf={(row, field) => {
            const path = rowPath(row, field);
            return path === undefined ? undefined : error?.fields[path];
          }}
          edited={(row, field) => {
            const path = rowPath(row, field);
            if (path !== undefined) edited(path);
          }}
        />
      </fieldset>
      <ErrorBox error={error} shownFields={[...SHOWN, ...rowIssues]} />
      <div className="actions">
        <button type="submit">{connection ? `Save ${connection.name}` : "Add connection"}</button>
        {onCancel && (
          <button type="button" className="secondary" onClick={onCancel}>
            Cancel
          </button>
        )}
      </div>
    </form>
  );
}
